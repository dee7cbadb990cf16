package ab

import (
	"math"
)

// ExactMaxN is the largest sample size for which the p-value is exact
// (without ties). The count of U's null distribution grows with n·m·(n+m)
// and beyond ~50 per side the normal approximation is already very close.
const ExactMaxN = 50

// MannWhitney is the result of a two-sided Mann-Whitney U test.
type MannWhitney struct {
	// UA counts pairs (a_i, b_j) with a_i > b_j, ties counting one half
	// (scipy's U1 for mannwhitneyu(a, b)); UB = n·m - UA.
	UA float64 `json:"u_a"`
	UB float64 `json:"u_b"`
	P  float64 `json:"p"`
	// Exact says P came from the exact null distribution; otherwise it is
	// the normal approximation with tie and continuity correction.
	Exact bool `json:"exact"`
}

// MannWhitneyU tests whether a and b come from the same distribution
// against the two-sided alternative that one tends to be larger.
func MannWhitneyU(a, b []float64) MannWhitney {
	n, m := len(a), len(b)
	pooled := append(append(make([]float64, 0, n+m), a...), b...)
	r, tieTerm := ranks(pooled)
	var ra float64
	for i := range n {
		ra += r[i]
	}
	ua := ra - float64(n*(n+1))/2
	res := MannWhitney{UA: ua, UB: float64(n*m) - ua}
	if n == 0 || m == 0 {
		res.P = math.NaN()
		return res
	}
	if tieTerm == 0 && n <= ExactMaxN && m <= ExactMaxN {
		res.Exact = true
		// U is an integer without ties; the two-sided p doubles the
		// smaller tail, as scipy does.
		cdf := uCDF(n, m)
		lo := int(math.Round(min(res.UA, res.UB)))
		res.P = math.Min(1, 2*cdf[lo])
		return res
	}
	res.P = normalP(res.UA, n, m, tieTerm)
	return res
}

// normalP is the two-sided normal-approximation p-value of U with the
// variance shrunk for ties and a 0.5 continuity correction.
func normalP(u float64, n, m int, tieTerm float64) float64 {
	nn, mm := float64(n), float64(m)
	N := nn + mm
	mu := nn * mm / 2
	variance := nn * mm / 12 * ((N + 1) - tieTerm/(N*(N-1)))
	if variance <= 0 {
		// Every value equal: no evidence of any difference.
		return 1
	}
	z := (math.Abs(u-mu) - 0.5) / math.Sqrt(variance)
	if z < 0 {
		z = 0
	}
	return math.Min(1, 2*normalSF(z))
}

// uCDF returns P(U <= u) for u = 0..n·m under the null hypothesis with no
// ties, counting the arrangements with the recursion
// f(n, m, u) = f(n-1, m, u-m) + f(n, m-1, u): the largest of the n+m
// values belongs either to A (it beats all m of B) or to B.
func uCDF(n, m int) []float64 {
	// counts[i][j] is the distribution for sizes (i, j), kept for the
	// current i only; values are float64 because binomial counts
	// overflow int64 near n = m = 35.
	prev := make([][]float64, m+1) // i-1
	for j := 0; j <= m; j++ {
		prev[j] = []float64{1} // i = 0: U is 0 in exactly one way
	}
	for i := 1; i <= n; i++ {
		cur := make([][]float64, m+1)
		cur[0] = []float64{1}
		for j := 1; j <= m; j++ {
			d := make([]float64, i*j+1)
			for u := range d {
				if u-j >= 0 && u-j < len(prev[j]) {
					d[u] += prev[j][u-j]
				}
				if u < len(cur[j-1]) {
					d[u] += cur[j-1][u]
				}
			}
			cur[j] = d
		}
		prev = cur
	}
	counts := prev[m]
	var total float64
	for _, c := range counts {
		total += c
	}
	cdf := make([]float64, len(counts))
	var acc float64
	for u, c := range counts {
		acc += c
		cdf[u] = acc / total
	}
	return cdf
}
