package datanode

import (
	"errors"
	"fmt"
	"syscall"
	"time"

	"smarth/internal/datanode/store"
	"smarth/internal/rpc/dfspb"
)

// checkVolumesLoop checks the data directories every disk_check_interval,
// and at once when a read or write met an I/O error (checkVolumesSoon).
func (d *DataNode) checkVolumesLoop() {
	t := time.NewTicker(d.cfg.DiskCheckInterval)
	defer t.Stop()
	for {
		select {
		case <-d.ctx.Done():
			return
		case <-t.C:
		case <-d.volumeCheck:
		}
		d.checkVolumes()
	}
}

// checkVolumesSoon asks for a volume check after an I/O error, as HDFS's
// DataNode.checkDiskErrorAsync; a check already asked for covers it.
func (d *DataNode) checkVolumesSoon() {
	select {
	case d.volumeCheck <- struct{}{}:
	default:
	}
}

// checkVolumes takes failed data directories out of service and reports
// their replicas deleted, so the namenode counts them lost and copies them
// from other nodes. Past failed_volumes_tolerated the datanode shuts down,
// as HDFS's does: a node losing disks one after another is better out of
// the cluster than half in it.
func (d *DataNode) checkVolumes() {
	lost, failed := d.store.CheckVolumes()
	if len(failed) == 0 {
		return
	}
	for _, f := range failed {
		d.log.Error("data directory failed its check; taken out of service", "dir", f.Dir, "err", f.Err)
	}
	for _, r := range lost {
		d.reportBlock(r, dfspb.ReceivedStatus_DELETED)
	}
	d.metrics.blocksRemoved.Add(float64(len(lost)))
	all := d.store.Failed()
	d.log.Warn("replicas lost with failed data directories reported to the namenode", "replicas", len(lost),
		"failed_dirs", len(all), "in_service", d.store.Dirs())
	if len(all) > d.cfg.FailedVolumesTolerated {
		d.log.Error("more data directories failed than failed_volumes_tolerated; shutting down",
			"failed", len(all), "failed_volumes_tolerated", d.cfg.FailedVolumesTolerated, "err", failedErr(all))
		d.selfStop.Store(&selfStop{err: fmt.Errorf("%d data directories failed, more than failed_volumes_tolerated (%d): %w",
			len(all), d.cfg.FailedVolumesTolerated, failedErr(all))})
		// From a goroutine of its own: Close waits for this one.
		go d.Close()
	}
}

type selfStop struct{ err error }

// Stopped is why the datanode shut itself down (too many failed data
// directories), or nil.
func (d *DataNode) Stopped() error {
	if s := d.selfStop.Load(); s != nil {
		return s.err
	}
	return nil
}

func failedErr(failed []store.FailedVolume) error {
	errs := make([]error, len(failed))
	for i, f := range failed {
		errs[i] = fmt.Errorf("%s: %w", f.Dir, f.Err)
	}
	return errors.Join(errs...)
}

// readFailed follows a replica that could not be opened for a read: an
// I/O error (EIO) has the scanner verify the replica at once, which reports
// it to the namenode if the disk still cannot give it back, and the
// volumes checked (the disk may be failing, not one file).
func (d *DataNode) readFailed(id uint64, err error) {
	if !errors.Is(err, syscall.EIO) {
		return
	}
	d.log.Warn("replica read failed with an I/O error", "block", id, "err", err)
	if r, ok := d.store.Get(id); ok {
		d.scanner.suspect(r)
	}
	d.checkVolumesSoon()
}
