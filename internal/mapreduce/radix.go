package mapreduce

import (
	"bytes"
	"slices"
)

// radixSort orders meta by (partition, key) under bytes.Compare: an LSD
// radix sort on the 8-byte key prefix and then the partition number
// (passes whose byte is the same for every record are skipped), followed by
// a comparison sort of each run of equal (partition, prefix), where only
// keys longer than 8 bytes or with trailing zero bytes can tie. On
// TeraSort's 10-byte keys this is several times faster than a comparison
// sort of the same entries; tmp must be as long as meta.
func radixSort(meta, tmp []recMeta, numParts int, data []byte) {
	if len(meta) < 2 {
		return
	}
	src, dst := meta, tmp[:len(meta)]
	pass := func(digit func(*recMeta) byte) {
		var count [256]int
		for i := range src {
			count[digit(&src[i])]++
		}
		if count[digit(&src[0])] == len(src) {
			return // every record has this byte: nothing to reorder
		}
		pos := 0
		for b := range count {
			c := count[b]
			count[b] = pos
			pos += c
		}
		for i := range src {
			d := digit(&src[i])
			dst[count[d]] = src[i]
			count[d]++
		}
		src, dst = dst, src
	}
	for shift := uint(0); shift < 64; shift += 8 {
		pass(func(m *recMeta) byte { return byte(m.prefix >> shift) })
	}
	for shift := uint(0); numParts > 1 && (numParts-1)>>shift > 0; shift += 8 {
		pass(func(m *recMeta) byte { return byte(uint32(m.part) >> shift) })
	}
	if &src[0] != &meta[0] {
		copy(meta, src)
	}
	for i := 0; i < len(meta); {
		j := i + 1
		for j < len(meta) && meta[j].prefix == meta[i].prefix && meta[j].part == meta[i].part {
			j++
		}
		if j-i > 1 {
			slices.SortFunc(meta[i:j], func(a, b recMeta) int {
				return bytes.Compare(data[a.off:a.off+a.keyLen], data[b.off:b.off+b.keyLen])
			})
		}
		i = j
	}
}
