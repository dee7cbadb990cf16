// Package units reads and prints the sizes and rates that flags, config
// files, topology files and reports carry, so that every command accepts
// the same spellings and prints a size the same way.
//
// What it decides: the syntax of a size ("64m", "1.5 GiB"; ParseSize), of
// a network or disk rate ("50Mbit/s", "40MB/s"; ParseBitRate, ParseRate,
// ParseByteRate), of a disk reservation ("10GiB" or "5%"; ParseReserve),
// and the few ways sizes are printed: FormatSize for the consoles and
// status commands, FormatHadoop where Hadoop's own wording is copied (du
// -h, quota and container messages), FormatSizeExact where the text must
// read back to the same number (benchmark reports, tuning profiles).
//
// What it leaves to others: the range a value must lie in (a block size, a
// link rate) is the caller's check, with its own message; durations are
// Go's time.ParseDuration everywhere ("30s", "10m"), which needs no
// wrapper.
package units

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Binary size units: every size prefix here means a power of 1024.
const (
	KiB int64 = 1 << (10 * (iota + 1))
	MiB
	GiB
	TiB
	PiB
	EiB
)

// prefixes are the size prefixes in order, each 1024 times the one before.
const prefixes = "kmgtpe"

// ParseSize reads a size in bytes as flags, configs and people write it.
//
// The syntax is a non-negative decimal number, optional spaces and an
// optional unit:
//
//	number = digits ["." [digits]] [("e" | "E") ["+" | "-"] digits]   or "." digits
//	unit   = prefix ["i"] ["B" | "b"]  |  "B"  |  "b"
//	prefix = "k" | "m" | "g" | "t" | "p" | "e"   (either case)
//
// e.g. "4096", "64m", "128M", "1g", "64MiB", "1.5 GiB", "200MB", "512k",
// "10B". Every prefix is binary (k = 1024, m = 1024²) whether or not the
// "i" is written: Hadoop reads -D dfs.blocksize=128m so
// (StringUtils.TraditionalBinaryPrefix), and TestDFSIO's "MB" means MiB
// too. A bare number is bytes. A fraction is rounded down to whole bytes;
// "1e6" is a million bytes and "1e" one EiB. Refused, with the text in the
// message: an empty string, a sign, a non-finite number, "i" without a
// prefix, any other suffix, and sizes of 8 EiB or more (past int64).
func ParseSize(s string) (int64, error) { return ParseSizeIn(s, 1) }

// ParseSizeIn is ParseSize where a bare number counts in unit (e.g. MiB,
// for a flag whose documented contract is megabytes) instead of bytes.
func ParseSizeIn(s string, unit int64) (int64, error) {
	num, suffix, ok := splitNumber(s, true)
	if !ok || unit <= 0 {
		return 0, sizeError(s)
	}
	mult := unit
	if suffix != "" {
		if mult, ok = sizeUnit(suffix); !ok {
			return 0, sizeError(s)
		}
	}
	// Whole numbers are exact, even past float64's 53 bits.
	if n, err := strconv.ParseInt(num, 10, 64); err == nil {
		if n > math.MaxInt64/mult {
			return 0, fmt.Errorf("size %q is too large (the most is 8 EiB - 1 byte)", s)
		}
		return n * mult, nil
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil && !isRangeError(err) {
		return 0, sizeError(s)
	}
	v := f * float64(mult)
	if math.IsInf(v, 0) || math.IsNaN(v) || v >= 0x1p63 {
		return 0, fmt.Errorf("size %q is too large (the most is 8 EiB - 1 byte)", s)
	}
	return int64(v), nil
}

func sizeError(s string) error {
	return fmt.Errorf("invalid size %q (want bytes or a number with a binary unit, e.g. 4096, 64m, 128MiB, 1.5 GiB)", s)
}

func isRangeError(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

// splitNumber splits s, trimmed, into its leading non-negative decimal
// number (with an exponent when exp is set) and the rest with spaces
// trimmed. ok is false when s does not start with a digit or a "." and a
// digit.
func splitNumber(s string, exp bool) (num, rest string, ok bool) {
	s = strings.TrimSpace(s)
	digits := func(i int) int {
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i
	}
	i := digits(0)
	n := i
	if i < len(s) && s[i] == '.' {
		i = digits(i + 1)
		n += i - n - 1
	}
	if n == 0 {
		return "", "", false
	}
	// An exponent only when a digit follows: "1e" is one EiB, "1e3" a
	// thousand.
	if exp && i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		if k := digits(j); k > j {
			i = k
		}
	}
	return s[:i], strings.TrimSpace(s[i:]), true
}

// sizeUnit is the multiplier of a size suffix such as "k", "MiB" or "GB".
func sizeUnit(suffix string) (int64, bool) {
	u := strings.ToLower(suffix)
	if u == "b" {
		return 1, true
	}
	u = strings.TrimSuffix(strings.TrimSuffix(u, "b"), "i")
	if len(u) != 1 {
		return 0, false
	}
	i := strings.IndexByte(prefixes, u[0])
	if i < 0 {
		return 0, false
	}
	return int64(1) << (10 * (i + 1)), true
}

// FormatSize prints n in the largest binary unit it reaches, with one
// decimal, and in bytes below 1 KiB: "512 B", "1.5 KiB", "64.0 MiB". The
// consoles, `smarth admin report`, `smarth cache` and `smarth job` print
// sizes so.
func FormatSize(n int64) string {
	if n < KiB {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := KiB, 0
	for m := n / KiB; m >= KiB; m /= KiB {
		div *= KiB
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// FormatHadoop prints n as Hadoop's StringUtils.TraditionalBinaryPrefix
// .long2String(n, unit, decimals) does, so that text copied from Hadoop
// reads the same: a whole number when the unit divides n ("1 K", "384 MB"),
// else decimals places ("1.50 KB"); below 1024 the bare number, followed
// by " "+unit when unit is not empty ("1023 B", "1023"). Prefixes are
// binary though written K, M, G, as Hadoop writes them. `hdfs dfs -du -h`
// is FormatHadoop(n, "", 1): "1.5 G".
func FormatHadoop(n int64, unit string, decimals int) string {
	if n == math.MinInt64 {
		return "-8 E" + unit
	}
	var b strings.Builder
	if n < 0 {
		b.WriteByte('-')
		n = -n
	}
	if n < KiB {
		b.WriteString(strconv.FormatInt(n, 10))
		if unit != "" {
			b.WriteString(" " + unit)
		}
		return b.String()
	}
	i := 0 // index in prefixes of the largest unit n reaches
	for i+1 < len(prefixes) && n >= int64(1)<<(10*(i+2)) {
		i++
	}
	shift := uint(10 * (i + 1))
	if n&(int64(1)<<shift-1) == 0 {
		b.WriteString(strconv.FormatInt(n>>shift, 10))
	} else {
		s := fmt.Sprintf("%.*f", decimals, float64(n)/float64(int64(1)<<shift))
		// 1023.999 K rounds to "1024.00": Hadoop moves up a unit.
		if strings.HasPrefix(s, "1024") && i+1 < len(prefixes) {
			i++
			s = fmt.Sprintf("%.*f", decimals, float64(n)/float64(int64(1)<<(10*(i+1))))
		}
		b.WriteString(s)
	}
	b.WriteByte(' ')
	b.WriteByte("KMGTPE"[i])
	b.WriteString(unit)
	return b.String()
}

// FormatSizeExact prints n in the largest binary unit that divides it,
// with no rounding: "64 MiB", "1 GiB", "1536 KiB", "100 B". ParseSize
// reads the text back to n, so a size in a benchmark report or a tuning
// profile can be pasted into a flag.
func FormatSizeExact(n int64) string {
	if n != 0 {
		for i := len(prefixes) - 1; i >= 0; i-- {
			shift := uint(10 * (i + 1))
			if n%(int64(1)<<shift) == 0 {
				return fmt.Sprintf("%d %ciB", n>>shift, "KMGTPE"[i])
			}
		}
	}
	return fmt.Sprintf("%d B", n)
}

// Reserve is space to keep free on a volume: a fixed size or a share of
// the volume's capacity (HDFS's dfs.datanode.du.reserved and
// dfs.datanode.du.reserved.pct).
type Reserve struct {
	Bytes   int64   // fixed size, when Percent is 0
	Percent float64 // share of the capacity, 0..100
}

// ParseReserve reads a size as ParseSize does ("10GiB", "0") or a share of
// the volume below 100% ("5%").
func ParseReserve(s string) (Reserve, error) {
	t := strings.TrimSpace(s)
	if p, ok := strings.CutSuffix(t, "%"); ok {
		f, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || f < 0 || f >= 100 {
			return Reserve{}, fmt.Errorf("invalid reservation %q (want a size such as 10GiB or a percentage below 100%%, such as 5%%)", s)
		}
		return Reserve{Percent: f}, nil
	}
	n, err := ParseSize(t)
	if err != nil {
		return Reserve{}, fmt.Errorf("invalid reservation %q (want a size such as 10GiB or a percentage such as 5%%)", s)
	}
	return Reserve{Bytes: n}, nil
}

// Of is the bytes reserved on a volume of the given capacity.
func (r Reserve) Of(capacity int64) int64 {
	if r.Percent > 0 {
		return int64(r.Percent / 100 * float64(capacity))
	}
	return r.Bytes
}

// String is the reservation as ParseReserve reads it.
func (r Reserve) String() string {
	if r.Percent > 0 {
		return strconv.FormatFloat(r.Percent, 'f', -1, 64) + "%"
	}
	return strconv.FormatInt(r.Bytes, 10)
}
