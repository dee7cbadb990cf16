package trash

import (
	"testing"
	"time"
)

func TestCheckpointNames(t *testing.T) {
	at := time.Date(2024, 2, 29, 13, 4, 5, 0, time.Local)
	if got := CheckpointName(at, 0); got != "240229130405" {
		t.Fatalf("CheckpointName = %q; want yyMMddHHmmss", got)
	}
	for _, name := range []string{CheckpointName(at, 0), CheckpointName(at, 3)} {
		got, ok := CheckpointTime(name)
		if !ok || !got.Equal(at) {
			t.Fatalf("CheckpointTime(%q) = %v %v; want %v", name, got, ok, at)
		}
	}
	for _, bad := range []string{Current, "2402291304", "notadate1234"} {
		if _, ok := CheckpointTime(bad); ok {
			t.Fatalf("CheckpointTime(%q) accepted", bad)
		}
	}
	if Expired(at, at.Add(time.Hour), time.Hour) || !Expired(at, at.Add(time.Hour+time.Second), time.Hour) {
		t.Fatal("Expired: a checkpoint expires only once older than the interval")
	}
}
