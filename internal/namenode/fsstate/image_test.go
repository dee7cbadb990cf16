package fsstate

import (
	"reflect"
	"strings"
	"testing"

	"smarth/internal/namenode/namespace"
)

// TestTypeQuotaImageRecord: a directory's type quotas round-trip through
// its image record; a version 4 record (none) still decodes, also as the
// current version, as snapshot inodes of an old image are decoded.
func TestTypeQuotaImageRecord(t *testing.T) {
	d, err := namespace.NewINode(5, "q", true, 0o755, "", "", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	d.SetQuota(&namespace.Quota{NS: 10, DS: -1, Types: map[string]int64{"DISK": 1 << 30, "SSD": 7}})
	var e enc
	encodeINode(&e, d)
	_, got, _, _, err := decodeINode(e.b, imageVersion)
	if err != nil || got.Quota() == nil || !reflect.DeepEqual(got.Quota().Types, d.Quota().Types) || got.Quota().NS != 10 || got.Quota().DS != -1 {
		t.Fatalf("round trip: %+v, %v", got.Quota(), err)
	}
	d.Quota().Types = nil
	e.b = e.b[:0]
	encodeINode(&e, d)
	v4 := e.b[:len(e.b)-1] // without the type count (0), as version 4 wrote it
	for _, v := range []uint64{4, imageVersion} {
		_, got, _, _, err := decodeINode(v4, v)
		if err != nil || got.Quota() == nil || got.Quota().NS != 10 || got.Quota().Types != nil {
			t.Fatalf("version 4 record read as %d: %+v, %v", v, got, err)
		}
	}
	bad := append(append([]byte{}, v4...), 1, 4, 'T', 'A', 'P', 'E', 2)
	if _, _, _, _, err := decodeINode(bad, imageVersion); err == nil {
		t.Fatal("an unknown storage type in an image decoded")
	} else if !strings.Contains(err.Error(), `unknown storage type "TAPE"`) {
		t.Fatalf("unknown storage type: %v", err)
	}
}
