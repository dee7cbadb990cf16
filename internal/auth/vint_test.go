package auth

import (
	"bytes"
	"testing"
)

// WritableUtils.writeVLong's encodings, as Java writes them.
func TestAppendVInt(t *testing.T) {
	for _, c := range []struct {
		v    int64
		want []byte
	}{
		{0, []byte{0}}, {127, []byte{127}}, {-112, []byte{0x90}},
		{128, []byte{0x8f, 0x80}}, {300, []byte{0x8e, 0x01, 0x2c}}, {-113, []byte{0x87, 0x70}},
	} {
		if got := AppendVLong(nil, c.v); !bytes.Equal(got, c.want) {
			t.Errorf("AppendVLong(%d) = % x, want % x", c.v, got, c.want)
		}
	}
}
