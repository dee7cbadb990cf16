package ab

import (
	"math"
	"slices"
)

// hodgesLehmann returns the median of the pairwise differences x_i - y_j
// and the distribution-free confidence interval around it: the k-th
// smallest and k-th largest difference, with k from the null distribution
// of U (exact when exact is set, normal otherwise). If the samples are too
// small for the confidence asked, the interval is infinite on both sides.
func hodgesLehmann(x, y []float64, confidence float64, exact bool) (est, lo, hi float64) {
	n, m := len(x), len(y)
	d := make([]float64, 0, n*m)
	for _, xi := range x {
		for _, yj := range y {
			d = append(d, xi-yj)
		}
	}
	slices.Sort(d)
	est = median(d)
	k := ciRank(n, m, 1-confidence, exact)
	if k < 1 {
		return est, math.Inf(-1), math.Inf(1)
	}
	return est, d[k-1], d[len(d)-k]
}

// ciRank is the largest k such that the interval from the k-th smallest
// to the k-th largest pairwise difference covers the true shift with
// probability >= 1 - alpha: under the null, fewer than k differences fall
// below the shift with probability P(U <= k-1), so we need
// 2·P(U <= k-1) <= alpha. Zero means no such interval exists.
func ciRank(n, m int, alpha float64, exact bool) int {
	if exact {
		cdf := uCDF(n, m)
		k := 0
		for u := 0; u < len(cdf) && 2*cdf[u] <= alpha; u++ {
			k = u + 1
		}
		return k
	}
	nn, mm := float64(n), float64(m)
	sd := math.Sqrt(nn * mm * (nn + mm + 1) / 12)
	// The usual large-sample rank (e.g. Hollander & Wolfe): the nearest
	// integer to nm/2 - z·sd, which is where U's normal quantile falls.
	k := int(math.Round(nn*mm/2 - normalQuantile(1-alpha/2)*sd))
	return max(k, 0)
}
