"""Exact mean-value analysis of a closed loop: N clients, each cycling between
a delay of mean Z (the cycle's time outside the station: the client's own
gap between a response and its next request, the network, TLS and HTTP on
both sides) and one M/M/c station of mean service time S. scripts/bench-closedloop compares our hey's
closed loop with it. Standard library only, like the benches."""


def throughput(n, s, z, c):
    """Requests/s of n clients (exact MVA with a load-dependent station).

    The station serves min(j, c) of the j requests it holds at once, so its
    rate with j is mu(j) = min(j, c) / s. For each population k = 1..n the
    response time is R(k) = sum_j j / mu(j) * p(j-1 | k-1), the throughput
    X(k) = k / (Z + R(k)), and p(j | k) = X(k) / mu(j) * p(j-1 | k-1), with
    p(0 | k) taking the rest (Reiser and Lavenberg's recursion)."""
    if n < 1 or s <= 0 or z < 0 or c < 1:
        raise ValueError(f"mva: need n >= 1, s > 0, z >= 0, c >= 1 (got n={n}, s={s}, z={z}, c={c})")
    p = [1.0]  # p(j | 0): the empty station
    x = 0.0
    for k in range(1, n + 1):
        r = sum(j * s / min(j, c) * p[j - 1] for j in range(1, k + 1))
        x = k / (z + r)
        q = [0.0] * (k + 1)
        for j in range(1, k + 1):
            q[j] = x * s / min(j, c) * p[j - 1]
        q[0] = max(0.0, 1.0 - sum(q[1:]))
        p = q
    return x
