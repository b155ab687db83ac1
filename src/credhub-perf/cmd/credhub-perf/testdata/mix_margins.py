# Seeded simulation of credhub-sim's capacity model (internal/capacity: K
# cores per instance, one write lock, FIFO per class, exponential service)
# under TestMixSetsSlowReads's load, to size that test's margins against the
# sampling noise of an 8 s step. Not run by the tests; numpy only.
#   python3 mix_margins.py RATE_ALONE RATE_MIX W_GET W_SET [REPS]
#   python3 mix_margins.py 90 170 9 8 1000
import numpy as np, heapq, sys
def run(rate, wget, wset, seed, dur=8.0, warm=3.0, mean=0.010, cores=2, dist="exp"):
    rng=np.random.default_rng(seed)
    n=int((warm+dur)*rate)
    t=np.arange(n)/rate
    isw = rng.random(n) < wset/(wget+wset)
    svc = rng.exponential(mean, n) if dist=="exp" else np.full(n,mean)
    # event sim
    free=cores; locked=False; queue=[]; ev=[]; done=np.zeros(n)
    i=0; now=0.0
    def grant(j,now):
        nonlocal free,locked
        free-=1
        if isw[j]: locked=True
        heapq.heappush(ev,(now+svc[j],j))
    while i<n or ev:
        if ev and (i>=n or ev[0][0] <= t[i]):
            now,j=heapq.heappop(ev); done[j]=now
            free+=1
            if isw[j]: locked=False
            kept=[]
            for q in queue:
                if free>0 and (not isw[q] or not locked): grant(q,now)
                else: kept.append(q)
            queue=kept
        else:
            now=t[i]; j=i; i+=1
            if not queue and free>0 and (not isw[j] or not locked): grant(j,now)
            elif free>0 and (not isw[j] or not locked) : grant(j,now)  # acquire: pick if free
            else: queue.append(j)
    lat=done-t
    m=(t>=warm)
    g=lat[m & ~isw]; s=lat[m & isw]
    return g.mean(), np.percentile(g,95), len(g), len(s)
args=sys.argv[1:]
rg,rm,wg,ws=map(float,args[:4]); N=int(args[4]) if len(args)>4 else 200
dist=args[5] if len(args)>5 else "exp"
dur=float(args[6]) if len(args)>6 else 8.0
R=[]
for k in range(N):
    a1=run(rg,1,0,1000+k,dur=dur,dist=dist); a2=run(rg,1,0,5000+k,dur=dur,dist=dist); mx=run(rm,wg,ws,9000+k,dur=dur,dist=dist)
    a = a1 if a1[0]<a2[0] else a2
    R.append((mx[0]/a[0], mx[1]/a[1], mx[2], mx[3]))
R=np.array(R)
print("mean ratio: med %.3f p1 %.3f p5 %.3f  fail(<1.15) %.3f"%(np.median(R[:,0]),np.percentile(R[:,0],1),np.percentile(R[:,0],5),(R[:,0]<1.15).mean()))
print("p95 ratio: med %.3f p1 %.3f p5 %.3f  fail(<1.15) %.3f"%(np.median(R[:,1]),np.percentile(R[:,1],1),np.percentile(R[:,1],5),(R[:,1]<1.15).mean()))
print("either fail %.3f ; gets %d sets %d"%(((R[:,0]<1.15)|(R[:,1]<1.15)).mean(), R[:,2].mean(), R[:,3].mean()))
print("min mean ratio %.3f min p95 ratio %.3f"%(R[:,0].min(),R[:,1].min()))
for th in (1.10,1.15,1.2,1.25):
    print("th %.2f: mean fail %.4f p95 fail %.4f"%(th,(R[:,0]<th).mean(),(R[:,1]<th).mean()))
