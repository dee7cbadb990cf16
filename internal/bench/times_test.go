package bench

import "testing"

// TestTimesOf pins the statistics every benchmark table shows (bench's
// summaries, scenario's cells): the sample standard deviation (n-1), and
// throughput at the mean and at the fastest run.
func TestTimesOf(t *testing.T) {
	got := TimesOf([]float64{4, 6, 2}, 12*MiB)
	want := Times{Runs: 3, Mean: 4, Min: 2, Max: 6, StdDev: 2, MiBps: 3, BestMiBps: 6}
	if got != want {
		t.Errorf("TimesOf(4, 6, 2 s of 12 MiB) = %+v; want %+v", got, want)
	}
	if got := TimesOf([]float64{3}, 6*MiB); got != (Times{Runs: 1, Mean: 3, Min: 3, Max: 3, MiBps: 2, BestMiBps: 2}) {
		t.Errorf("one run: %+v; want no spread", got)
	}
}
