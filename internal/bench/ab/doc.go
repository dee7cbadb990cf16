// Package ab compares two host or program configurations, A and B, from
// repeated measurements, the way an operator can trust: it runs them
// interleaved (A B B A A B B A ...), so drift of a shared machine hits both
// sides alike and neither side always follows the other, and it reports for
// each benchmark the two medians, the speedup of B over A, a 95% confidence
// interval of that speedup, a Mann-Whitney U p-value and a verdict (faster,
// slower, or no significant difference at alpha 0.05).
//
// Seed 002 (rpcbind on/off, Table III) reports speedups from single runs;
// on a noisy machine a single run cannot tell a 1.01x speedup from noise,
// which is what this package is for. Seed 001's genetic algorithm uses it to
// confirm a tuned profile against the default before calling it better.
//
// Statistics, and why these:
//
//   - Speedup is the ratio of medians, as the paper's Table III divides
//     elapsed times. For times (lower is better) it is median(A)/median(B);
//     for rates such as throughput (Options.HigherIsBetter) it is
//     median(B)/median(A). Either way > 1 means B is better.
//   - The confidence interval is the Hodges-Lehmann interval of the ratio,
//     not a bootstrap: the n·m pairwise log ratios log(a_i/b_j) are sorted
//     and the interval runs from the k-th smallest to the k-th largest,
//     with k taken from the Mann-Whitney null distribution of U (exact when
//     the p-value is exact, normal otherwise). It is distribution-free,
//     needs no random numbers (the same data always give the same interval)
//     and agrees with the test: with exact p-values the interval excludes
//     1 exactly when p < alpha. Its point estimate (Comparison.HLSpeedup),
//     the median pairwise ratio, is robust to one wild run.
//   - The p-value is the two-sided Mann-Whitney U test. It is exact (the
//     null distribution of U counted by recursion) when there are no ties
//     and both samples have at most ExactMaxN values; otherwise it is the
//     normal approximation with tie correction of the variance and a 0.5
//     continuity correction, which is what scipy.stats.mannwhitneyu does
//     with method="auto".
//   - The verdict is "faster" or "slower" only when p < alpha; the
//     direction is that of the Hodges-Lehmann estimate. Otherwise "no
//     significant difference", reported with its interval so a reader sees
//     how large a difference the runs could have missed.
//
// What it leaves to others: what a run is (a command, a benchmark of the
// suite, a transfer read from the datanode log) and how a configuration is
// switched (setup commands, sysctls); callers give functions for both.
package ab
