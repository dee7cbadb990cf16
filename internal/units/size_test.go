package units

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

// TestParseSizeAcceptsEverySpelling: the spellings the three former
// parsers accepted (cluster flags, MapReduce app parameters, tune
// --profile), Hadoop's -D dfs.blocksize=128m and what people write.
func TestParseSizeAcceptsEverySpelling(t *testing.T) {
	for in, want := range map[string]int64{
		"0": 0, "4096": 4096, "10B": 10, "10b": 10, " 7 ": 7,
		"512k": 512 << 10, "512K": 512 << 10, "4kb": 4 << 10, "64KiB": 64 << 10, "64Ki": 64 << 10,
		"64m": 64 << 20, "128M": 128 << 20, "64mb": 64 << 20, "200MiB": 200 << 20, "200 MiB": 200 << 20,
		"1g": 1 << 30, "1G": 1 << 30, "1GB": 1 << 30, "1GiB": 1 << 30, "1.5GiB": 3 << 29, "1.5 GiB": 3 << 29,
		"2t": 2 << 40, "3P": 3 << 50, "7e": 7 << 60, "1EiB": 1 << 60,
		".5k": 512, "1.k": 1024, "1e3": 1000, "1E3": 1000, "1e3k": 1000 << 10, "2.5e1m": 25 << 20, "1e": 1 << 60,
		"1.9":                 1, // a fraction of a byte is dropped
		"9223372036854775807": math.MaxInt64,
		"8191PiB":             8191 << 50,
		"00064m":              64 << 20,
		"1e-400":              0,
		"0.0000000000001 GiB": 0,
		"9007199254740993":    9007199254740993, // past float64's 53 bits: read exactly
		"9007199254740993 B":  9007199254740993,
		"1099511627776 KiB":   1 << 50,
		"8191.5 PiB":          8191<<50 + 1<<49, // float path, just below 2^63
	} {
		got, err := ParseSize(in)
		if err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
}

func TestParseSizeRefusesWithTheText(t *testing.T) {
	for _, bad := range []string{
		"", " ", "GiB", "k", "12x", "-1", "+1", "1.2.3M", "1..2", ".", "e3", "1 2", "1ib", "1i", "1bb",
		"1kk", "1 kib b", "inf", "NaN", "0x10", "1_000", "1e3x",
		"8e", "8EiB", "9223372036854775808", "8192PiB", "1e19", "1e400", "9e18 GiB",
	} {
		_, err := ParseSize(bad)
		if err == nil {
			t.Errorf("ParseSize(%q) accepted", bad)
			continue
		}
		if !strings.Contains(err.Error(), "\""+bad+"\"") {
			t.Errorf("ParseSize(%q) = %v; the message does not name the input", bad, err)
		}
	}
}

// TestParseSizeIn: a bare number counts in the default unit; a written
// unit wins over it.
func TestParseSizeIn(t *testing.T) {
	for in, want := range map[string]int64{"10": 10 << 20, "1.5": 3 << 19, "10KiB": 10 << 10, "1g": 1 << 30, "10B": 10} {
		if got, err := ParseSizeIn(in, MiB); err != nil || got != want {
			t.Errorf("ParseSizeIn(%q, MiB) = %d, %v; want %d", in, got, err, want)
		}
	}
	if _, err := ParseSizeIn("9000000000000", MiB); err == nil {
		t.Error("ParseSizeIn(9e12, MiB) accepted a size past int64")
	}
}

func TestFormatSize(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 1536: "1.5 KiB",
		64 << 20: "64.0 MiB", 5 << 30: "5.0 GiB", 3 << 50: "3.0 PiB", math.MaxInt64: "8.0 EiB"} {
		if got := FormatSize(n); got != want {
			t.Errorf("FormatSize(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestFormatHadoop: Hadoop's TraditionalBinaryPrefix.long2String, as the
// quota exceptions (unit "B", 2 places), `hdfs dfs -du -h` (no unit, 1
// place) and the container-kill message (1 place, "B") print sizes.
func TestFormatHadoop(t *testing.T) {
	for _, c := range []struct {
		n        int64
		unit     string
		decimals int
		want     string
	}{
		{0, "B", 2, "0 B"}, {1023, "B", 2, "1023 B"}, {1024, "B", 2, "1 KB"}, {1536, "B", 2, "1.50 KB"},
		{402653184, "B", 2, "384 MB"}, {3 << 30, "B", 2, "3 GB"}, {1<<20 - 1, "B", 2, "1.00 MB"},
		{5<<40 + 1<<39, "B", 2, "5.50 TB"}, {-1536, "B", 2, "-1.50 KB"}, {math.MinInt64, "B", 2, "-8 EB"},
		{0, "", 1, "0"}, {1023, "", 1, "1023"}, {1024, "", 1, "1 K"}, {1536, "", 1, "1.5 K"},
		{1025, "", 1, "1.0 K"}, {64 << 20, "", 1, "64 M"}, {3 << 30, "", 1, "3 G"},
		{32 << 20, "B", 1, "32 MB"}, {33<<20 + 1<<19, "B", 1, "33.5 MB"},
	} {
		if got := FormatHadoop(c.n, c.unit, c.decimals); got != c.want {
			t.Errorf("FormatHadoop(%d, %q, %d) = %q, want %q", c.n, c.unit, c.decimals, got, c.want)
		}
	}
}

// TestFormatSizeExactReadsBack: the exact form names the number, so
// ParseSize gives it back.
func TestFormatSizeExactReadsBack(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 100: "100 B", 1024: "1 KiB", 64 << 20: "64 MiB",
		3 << 19: "1536 KiB", 64 << 10: "64 KiB", 1 << 30: "1 GiB", 4 << 40: "4 TiB", 1536: "1536 B"} {
		got := FormatSizeExact(n)
		if got != want {
			t.Errorf("FormatSizeExact(%d) = %q, want %q", n, got, want)
		}
		if back, err := ParseSize(got); err != nil || back != n {
			t.Errorf("ParseSize(FormatSizeExact(%d) = %q) = %d, %v", n, got, back, err)
		}
	}
}

func TestParseReserve(t *testing.T) {
	for in, want := range map[string]int64{"10GiB": 10 << 30, "1m": 1 << 20, "0": 0, "5%": 50, "0.5%": 5, "25 %": 250} {
		r, err := ParseReserve(in)
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		if got := r.Of(1000); got != want {
			t.Errorf("%q of a 1000-byte volume = %d, want %d", in, got, want)
		}
	}
	for _, bad := range []string{"", "x", "100%", "-5%", "%", "5%%"} {
		if _, err := ParseReserve(bad); err == nil {
			t.Errorf("ParseReserve(%q) accepted", bad)
		}
	}
}

// FuzzParseSize: any input either fails with an error naming it or gives
// a non-negative size that agrees with the same number read in another
// unit, and never panics.
func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"64m", "1.5 GiB", "4096", "1e3k", "7e", "9223372036854775807", ".5k", "1e-9", "8EiB"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseSize(s)
		if err != nil {
			if !strings.Contains(err.Error(), fmt.Sprintf("%q", s)) {
				t.Fatalf("ParseSize(%q): %v does not name the input", s, err)
			}
			return
		}
		if n < 0 {
			t.Fatalf("ParseSize(%q) = %d < 0", s, n)
		}
		// A bare number read as KiB is 1024 times as large (when that fits).
		num, rest, _ := splitNumber(s, true)
		if rest == "" && n < math.MaxInt64/KiB/2 {
			k, err := ParseSizeIn(s, KiB)
			if err != nil {
				t.Fatalf("ParseSize(%q) = %d but ParseSizeIn(KiB): %v", s, n, err)
			}
			if lo, hi := n*KiB, (n+1)*KiB; k < lo || k >= hi {
				t.Fatalf("ParseSizeIn(%q (%s), KiB) = %d, want in [%d, %d)", s, num, k, lo, hi)
			}
		}
	})
}
