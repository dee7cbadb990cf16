package ab

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// median of xs; xs is not modified. NaN for an empty slice.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// normalSF is the upper tail P(Z > z) of the standard normal.
func normalSF(z float64) float64 { return 0.5 * math.Erfc(z/math.Sqrt2) }

// normalQuantile is the z with P(Z <= z) = p.
func normalQuantile(p float64) float64 { return math.Sqrt2 * math.Erfinv(2*p-1) }

// ranks gives the mid-ranks (1-based, ties share their average rank) of
// the pooled values, and sum(t^3 - t) over the tie groups, which the
// normal approximation needs to shrink its variance.
func ranks(pooled []float64) (r []float64, tieTerm float64) {
	idx := make([]int, len(pooled))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case pooled[a] < pooled[b]:
			return -1
		case pooled[a] > pooled[b]:
			return 1
		}
		return 0
	})
	r = make([]float64, len(pooled))
	for i := 0; i < len(idx); {
		j := i + 1
		for j < len(idx) && pooled[idx[j]] == pooled[idx[i]] {
			j++
		}
		// positions i..j-1 (0-based) hold equal values: ranks i+1..j.
		mid := float64(i+1+j) / 2
		for k := i; k < j; k++ {
			r[idx[k]] = mid
		}
		t := float64(j - i)
		tieTerm += t*t*t - t
		i = j
	}
	return r, tieTerm
}

// RatioInterval is the geometric mean of per-round ratios (B/A of one
// round each, e.g. a policy's run time over the baseline's in the same
// round) with its confidence interval: Student's t on the logs, the
// rounds being the independent samples. With fewer than 2 ratios there
// is no interval (lo = hi = 0).
func RatioInterval(ratios []float64, confidence float64) (gm, lo, hi float64) {
	n := len(ratios)
	if n == 0 {
		return 0, 0, 0
	}
	logs := make([]float64, n)
	for i, r := range ratios {
		logs[i] = math.Log(r)
	}
	mean, sd := stat.MeanStdDev(logs, nil)
	gm = math.Exp(mean)
	if n < 2 {
		return gm, 0, 0
	}
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 1)}.Quantile(1 - (1-confidence)/2)
	half := t * sd / math.Sqrt(float64(n))
	return gm, math.Exp(mean - half), math.Exp(mean + half)
}
