package store

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"smarth/internal/datanode/store/vfs"
	"smarth/internal/diskperm"
	"strings"
	"syscall"
	"time"
)

// A volume is one data directory (HDFS's FsVolume): replicas live in
// exactly one, new ones go to the one the volume-choosing policy picks,
// and a volume that fails its check is taken out of service with its
// replicas, while the others keep serving.
type volume struct {
	dir       string
	finalized string
	rbw       string
	tmp       string
}

// Volume-choosing policies (HDFS's dfs.datanode.fsdataset.volume.choosing.policy).
const (
	// RoundRobin takes the volumes in turn, skipping full ones (HDFS's
	// RoundRobinVolumeChoosingPolicy, its default).
	RoundRobin = "round_robin"
	// AvailableSpace prefers volumes with more free space once they
	// differ by more than AvailableSpaceThreshold (HDFS's
	// AvailableSpaceVolumeChoosingPolicy).
	AvailableSpace = "available_space"
)

// HDFS's defaults for the available-space policy:
// ...balanced-space-threshold (10 GiB) and ...balanced-space-preference-fraction (0.75).
const (
	AvailableSpaceThreshold  = 10 << 30
	availableSpacePreference = 0.75
)

// FailedVolume is a data directory taken out of service.
type FailedVolume struct {
	Dir string
	Err error
	At  time.Time
}

// OpenVolumes opens the data directories dirs as one store. A directory
// that cannot be prepared is recorded as failed (Failed) rather than
// failing the whole store, as HDFS counts it against
// dfs.datanode.failed.volumes.tolerated; with none usable Open fails.
// The volumes share one datanode id, kept in each one's VERSION.
func OpenVolumes(dirs []string, opts Options) (*Store, error) {
	if len(dirs) == 0 {
		return nil, errors.New("no data directory")
	}
	s := &Store{dir: dirs[0], opts: opts, fs: opts.FS, replicas: make(map[uint64]*replica), creating: map[*Writer]struct{}{}}
	if s.fs == nil {
		s.fs = vfs.OS
	}
	if s.opts.Remove == nil {
		s.opts.Remove = s.fs.Remove
	}
	if s.opts.VolumeChoice == "" {
		s.opts.VolumeChoice = RoundRobin
	}
	var errs []error
	for _, d := range dirs {
		v, err := openVolume(s.fs, d)
		if err != nil {
			err = fmt.Errorf("data directory %s: %w", d, err)
			errs = append(errs, err)
			s.failed = append(s.failed, FailedVolume{Dir: d, Err: err, At: time.Now()})
			continue
		}
		s.vols = append(s.vols, v)
	}
	if len(s.vols) == 0 {
		return nil, errors.Join(errs...)
	}
	id, err := volumesID(s.fs, s.vols)
	if err != nil {
		return nil, err
	}
	s.id = id
	for _, v := range s.vols {
		if err := s.scan(v, v.finalized, Finalized); err != nil {
			return nil, err
		}
	}
	for _, v := range s.vols {
		if err := s.scan(v, v.rbw, RBW); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// volumesID is the datanode id the volumes' VERSION files agree on (a new
// one if none has any), written to those that lack it. Volumes of two
// different datanodes are refused: their replicas would be reported under
// the wrong node.
func volumesID(fs vfs.FS, vols []*volume) (string, error) {
	id, from := "", ""
	for _, v := range vols {
		got, err := readID(fs, v.dir)
		if err != nil {
			return "", err
		}
		switch {
		case got == "":
		case id == "":
			id, from = got, v.dir
		case got != id:
			return "", fmt.Errorf("data directory %s belongs to datanode %s, but %s to %s", v.dir, got, from, id)
		}
	}
	if id == "" {
		id = newUUID()
	}
	for _, v := range vols {
		if got, _ := readID(fs, v.dir); got == "" {
			if err := writeID(fs, v.dir, id); err != nil {
				return "", err
			}
		}
	}
	return id, nil
}

// readID reads dir's VERSION: "" if there is none.
func readID(fs vfs.FS, dir string) (string, error) {
	path := filepath.Join(dir, "VERSION")
	b, err := vfs.ReadFile(fs, path)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	var v versionFile
	if err := json.Unmarshal(b, &v); err != nil || v.DatanodeID == "" {
		return "", fmt.Errorf("%s: not a datanode VERSION file (%v)", path, err)
	}
	return v.DatanodeID, nil
}

func writeID(fs vfs.FS, dir, id string) error {
	path := filepath.Join(dir, "VERSION")
	b, _ := json.Marshal(versionFile{LayoutVersion: 1, DatanodeID: id})
	tmp := path + ".tmp"
	if err := vfs.WriteFile(fs, tmp, append(b, '\n'), diskperm.File); err != nil {
		return err
	}
	return fs.Rename(tmp, path)
}

// Dirs lists the data directories in service.
func (s *Store) Dirs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, len(s.vols))
	for i, v := range s.vols {
		out[i] = v.dir
	}
	return out
}

// Failed lists the data directories taken out of service, oldest first.
func (s *Store) Failed() []FailedVolume {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.failed)
}

func (s *Store) inServiceLocked(v *volume) bool { return slices.Contains(s.vols, v) }

// Usage is disk usage for heartbeats.
type Usage struct {
	Capacity  int64 // size of the file systems holding the data directories, less Reserved
	Used      int64 // bytes in replica files
	Remaining int64 // bytes available to this process on them, less Reserved (not below 0 on any)
	Reserved  int64 // du_reserved in bytes, summed over the data directories
	Blocks    int
	Volumes   int // data directories in service
	Failed    int // data directories taken out of service
}

// Usage measures the data directories' file systems (statfs) and the bytes
// the replicas take. Like HDFS's FsVolumeImpl, it reports capacity and
// remaining space net of the reserve, so the namenode never counts on the
// reserve for placement. Directories sharing a file system are counted
// once per directory, as HDFS does.
func (s *Store) Usage() (Usage, error) {
	var u Usage
	s.mu.Lock()
	for _, r := range s.replicas {
		u.Used += r.Length + metaLen(r.Length, r.BytesPerChecksum)
		u.Blocks++
	}
	vols := slices.Clone(s.vols)
	u.Failed = len(s.failed)
	s.mu.Unlock()
	u.Volumes = len(vols)
	var errs []error
	for _, v := range vols {
		capacity, avail, err := s.fs.Statfs(v.dir)
		if err != nil {
			errs = append(errs, err) // the volume check decides whether it failed
			continue
		}
		reserved := s.opts.Reserve.Of(capacity)
		u.Reserved += reserved
		u.Capacity += max(capacity-reserved, 0)
		u.Remaining += max(avail-reserved, 0)
	}
	if len(errs) == len(vols) {
		return u, errors.Join(errs...)
	}
	return u, nil
}

// volumeSpace is one volume's file system as statfs saw it.
type volumeSpace struct {
	capacity, avail int64
	err             error
}

// statVolumes measures every volume in service, without holding s.mu (a
// slow disk must not stall the store).
func (s *Store) statVolumes() map[*volume]volumeSpace {
	s.mu.Lock()
	vols := slices.Clone(s.vols)
	s.mu.Unlock()
	free := make(map[*volume]volumeSpace, len(vols))
	for _, v := range vols {
		var sp volumeSpace
		sp.capacity, sp.avail, sp.err = s.fs.Statfs(v.dir)
		free[v] = sp
	}
	return free
}

// allocated is what n bytes of a file take on disk: whole 4 KiB blocks.
func allocated(n int64) int64 { return (n + 4095) &^ 4095 }

// chooseVolumeLocked picks the volume for a new replica that may take need
// bytes (0: unknown) among those whose free space, less the reserve and
// less what the replicas being written there may still take, holds it
// (more than nothing when need is 0), by Options.VolumeChoice. With none
// it refuses, as HDFS's volume choice refuses a volume without room ("Out
// of space"): the write fails at setup and the client's pipeline moves on
// to another datanode. free is statVolumes' view; volumes it did not see
// are skipped.
func (s *Store) chooseVolumeLocked(name string, free map[*volume]volumeSpace, need int64) (*volume, error) {
	vols := s.vols
	if len(vols) == 0 {
		return nil, fmt.Errorf("cannot create %s: every data directory was taken out of service", name)
	}
	promised := s.promisedLocked()
	room := make([]int64, len(vols))
	var full []string
	for i, v := range vols {
		sp, ok := free[v]
		switch {
		case !ok:
			continue
		case sp.err != nil:
			full = append(full, sp.err.Error())
			continue
		}
		reserved := s.opts.Reserve.Of(sp.capacity)
		room[i] = sp.avail - reserved - promised[v]
		if room[i] > 0 && room[i] >= need {
			continue
		}
		what := fmt.Sprintf("%d bytes", reserved)
		if s.opts.Reserve.Percent > 0 {
			what = fmt.Sprintf("%s of %d bytes = %d bytes", s.opts.Reserve, sp.capacity, reserved)
		}
		msg := fmt.Sprintf("data directory %s has %d bytes free", v.dir, sp.avail)
		if promised[v] > 0 {
			msg += fmt.Sprintf(" (%d of them promised to replicas being written)", promised[v])
		}
		if need > 0 {
			msg += fmt.Sprintf(", no room for a %d-byte replica above du_reserved (%s)", need, what)
		} else {
			msg += fmt.Sprintf(", at or below du_reserved (%s)", what)
		}
		full = append(full, msg)
		room[i] = 0
	}
	var ok []int
	for i := range vols {
		if room[i] > 0 {
			ok = append(ok, i)
		}
	}
	if len(ok) == 0 {
		return nil, fmt.Errorf("%w: cannot create %s: %s", ErrNoSpace, name, strings.Join(full, "; "))
	}
	if s.opts.VolumeChoice == AvailableSpace {
		ok = preferFree(ok, room)
	}
	// Round robin over vols, starting after the last one chosen.
	for k := range len(vols) {
		i := (s.next + k) % len(vols)
		if slices.Contains(ok, i) {
			s.next = i + 1
			return vols[i], nil
		}
	}
	return vols[ok[0]], nil
}

// promisedLocked is, per volume, what the replicas being written there
// may still take: each one's need less what its acknowledged bytes
// already take (those are out of the file system's free space). Writers
// that have let go are dropped here.
func (s *Store) promisedLocked() map[*volume]int64 {
	promised := map[*volume]int64{}
	for w := range s.creating {
		if w.r.writer != w {
			delete(s.creating, w)
			continue
		}
		promised[w.r.vol] += max(w.need-allocated(w.r.Visible)-allocated(metaLen(w.r.Visible, w.bpc)), 0)
	}
	return promised
}

// preferFree is the available-space policy's choice of candidates: all of
// them when their free space is within AvailableSpaceThreshold of each
// other, else the ones with much more room with probability 0.75 (scaled
// by how many there are of each, as HDFS does) and the others otherwise.
func preferFree(ok []int, room []int64) []int {
	least, most := room[ok[0]], room[ok[0]]
	for _, i := range ok {
		least, most = min(least, room[i]), max(most, room[i])
	}
	if most-least < AvailableSpaceThreshold {
		return ok
	}
	var high, low []int
	for _, i := range ok {
		if room[i] > least+AvailableSpaceThreshold {
			high = append(high, i)
		} else {
			low = append(low, i)
		}
	}
	h := availableSpacePreference * float64(len(high))
	l := (1 - availableSpacePreference) * float64(len(low))
	if rand.Float64() < h/(h+l) {
		return high
	}
	return low
}

// CheckVolumes checks every data directory in service, as HDFS's volume
// checker does: its directories are there and a file can be created,
// written, synced and removed in it. A volume that fails is taken out of
// service: its replicas are forgotten (returned, for the namenode to hear
// they are lost and copy them elsewhere), writes on it are stopped, and
// new replicas go to the other volumes. A full volume is not a failed one.
func (s *Store) CheckVolumes() (lost []Replica, failed []FailedVolume) {
	s.mu.Lock()
	vols := slices.Clone(s.vols)
	s.mu.Unlock()
	bad := map[*volume]error{}
	for _, v := range vols {
		if err := checkVolume(s.fs, v); err != nil {
			bad[v] = err
		}
	}
	if len(bad) == 0 {
		return nil, nil
	}
	var writers []*Writer
	s.mu.Lock()
	now := time.Now()
	s.vols = slices.DeleteFunc(s.vols, func(v *volume) bool { return bad[v] != nil })
	for _, v := range vols {
		if err := bad[v]; err != nil {
			fv := FailedVolume{Dir: v.dir, Err: err, At: now}
			s.failed = append(s.failed, fv)
			failed = append(failed, fv)
		}
	}
	for id, r := range s.replicas {
		if bad[r.vol] == nil {
			continue
		}
		if r.writer != nil {
			writers = append(writers, r.writer)
		}
		if r.State != Temporary {
			lost = append(lost, r.Replica)
		}
		delete(s.replicas, id)
		s.changedLocked(r)
	}
	s.mu.Unlock()
	for _, w := range writers {
		w.abandon()
	}
	slices.SortFunc(lost, func(a, b Replica) int { return cmp.Compare(a.BlockID, b.BlockID) })
	return lost, failed
}

// checkVolume is HDFS's DiskChecker.checkDirWithDiskIo for one volume.
func checkVolume(fs vfs.FS, v *volume) error {
	for _, d := range []string{v.dir, v.finalized, v.rbw, v.tmp} {
		fi, err := fs.Stat(d)
		if err != nil {
			return err
		}
		if !fi.IsDir() {
			return fmt.Errorf("%s is not a directory", d)
		}
	}
	f, err := fs.CreateTemp(v.tmp, "volume-check-")
	if err != nil {
		return noSpaceIsHealthy(err)
	}
	name := f.Name()
	_, err = f.Write(make([]byte, 512))
	if err == nil {
		err = f.Sync()
	}
	err = errors.Join(err, f.Close(), fs.Remove(name))
	return noSpaceIsHealthy(err)
}

// noSpaceIsHealthy: a volume with no room left still serves its replicas.
func noSpaceIsHealthy(err error) error {
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return nil
	}
	return err
}
