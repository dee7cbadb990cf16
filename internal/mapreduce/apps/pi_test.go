package apps

import (
	"math"
	"strconv"
	"strings"
	"testing"
)

// radicalInverse is the direct definition of the Halton coordinate.
func radicalInverse(n, base uint64) float64 {
	x, w := 0.0, 1.0
	for ; n > 0; n /= base {
		w /= float64(base)
		x += float64(n%base) * w
	}
	return x
}

func TestHaltonIncrementalMatchesDefinition(t *testing.T) {
	for _, base := range []uint64{2, 3} {
		for _, start := range []uint64{0, 1, 7, 8, 26, 1000, 1 << 20} {
			h := newHalton(base, start)
			for i := uint64(1); i <= 3000; i++ {
				got, want := h.next(), radicalInverse(start+i, base)
				if math.Abs(got-want) > 1e-12 {
					t.Fatalf("base %d index %d: %v, want %v", base, start+i, got, want)
				}
			}
		}
	}
}

func TestPiMatchesDirectCount(t *testing.T) {
	e := newEnv(t)
	const maps, samples = 3, 20000
	est, res, err := RunPi(t.Context(), e.r, map[string]string{"maps": strconv.Itoa(maps), "samples": strconv.Itoa(samples)})
	if err != nil {
		t.Fatal(err)
	}
	var inside int64
	for i := uint64(1); i <= maps*samples; i++ {
		x, y := radicalInverse(i, 2)-0.5, radicalInverse(i, 3)-0.5
		if x*x+y*y <= 0.25 {
			inside++
		}
	}
	if got := res.Counters[GroupPi][CounterInside]; got != inside {
		t.Fatalf("inside = %d, want %d", got, inside)
	}
	if want := 4 * float64(inside) / (maps * samples); est != want || math.Abs(est-math.Pi) > 1e-3 {
		t.Fatalf("estimate %v, want %v (≈π)", est, want)
	}
	// The driver prints the estimate and cleans its temporary output.
	e.run("pi", "maps", "2", "samples", "1000")
	if !strings.HasPrefix(e.out.String(), "Estimated value of Pi is 3.1") {
		t.Fatalf("pi printed %q", e.out.String())
	}
	if ents, _ := e.fs.List(t.Context(), "/tmp"); len(ents) != 0 {
		t.Fatalf("pi left %v behind", ents)
	}
}
