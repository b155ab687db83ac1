package config

import "strings"

// Closest returns the candidate nearest to name by edit distance, when it
// is near enough to be the likely intent of a typo (a few letters off), or
// "" otherwise.
func Closest(name string, candidates []string) string {
	best, bestD := "", -1
	for _, c := range candidates {
		d := editDistance(strings.ToLower(name), strings.ToLower(c))
		if bestD < 0 || d < bestD || (d == bestD && c < best) {
			best, bestD = c, d
		}
	}
	if bestD < 0 || bestD > max(2, len(name)/4) {
		return ""
	}
	return best
}

// didYouMean is Closest as the end of an error message.
func didYouMean(name string, candidates []string) string {
	if c := Closest(name, candidates); c != "" {
		return "; did you mean " + c + "?"
	}
	return ""
}

// editDistance is the Levenshtein distance (on bytes: names are ASCII),
// with a swap of two neighbours counting as one edit.
func editDistance(a, b string) int {
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

// knownPaths are every key and every section a config file may hold.
func knownPaths() []string {
	seen := map[string]bool{}
	var out []string
	for _, k := range Keys {
		parts := strings.Split(k.Name, ".")
		for i := 1; i <= len(parts); i++ {
			p := strings.Join(parts[:i], ".")
			if !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	return out
}
