package namenode

import (
	"context"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"smarth/internal/namenode/blockmap"
	"smarth/internal/namenode/speeds"
	"smarth/internal/rpc/dfspb"
)

// clientRPC serves ClientProtocol: it only translates messages; the logic
// is in the NameNode methods.
type clientRPC struct {
	dfspb.UnimplementedClientProtocolServer
	nn *NameNode
}

func (s *clientRPC) Mkdirs(ctx context.Context, r *dfspb.MkdirsRequest) (*dfspb.MkdirsResponse, error) {
	return &dfspb.MkdirsResponse{}, s.nn.mkdirs(ctx, r)
}

func (s *clientRPC) Create(ctx context.Context, r *dfspb.CreateRequest) (*dfspb.CreateResponse, error) {
	return atMostOnce(ctx, s.nn, "create", func(ctx context.Context) (*dfspb.CreateResponse, error) {
		st, err := s.nn.create(ctx, r)
		if err != nil {
			return nil, err
		}
		return &dfspb.CreateResponse{Status: st}, nil
	})
}

func (s *clientRPC) AddBlock(ctx context.Context, r *dfspb.AddBlockRequest) (*dfspb.AddBlockResponse, error) {
	return s.nn.addBlock(ctx, r)
}

func (s *clientRPC) Complete(ctx context.Context, r *dfspb.CompleteRequest) (*dfspb.CompleteResponse, error) {
	ok, err := s.nn.complete(ctx, r)
	if err != nil {
		return nil, err
	}
	return &dfspb.CompleteResponse{Completed: ok}, nil
}

func (s *clientRPC) AbandonBlock(ctx context.Context, r *dfspb.AbandonBlockRequest) (*dfspb.AbandonBlockResponse, error) {
	return &dfspb.AbandonBlockResponse{}, s.nn.abandonBlock(ctx, r)
}

func (s *clientRPC) GetAdditionalDatanode(ctx context.Context, r *dfspb.GetAdditionalDatanodeRequest) (*dfspb.GetAdditionalDatanodeResponse, error) {
	lb, err := s.nn.additionalDatanode(ctx, r)
	if err != nil {
		return nil, err
	}
	return &dfspb.GetAdditionalDatanodeResponse{Block: lb}, nil
}

func (s *clientRPC) UpdateBlockForPipeline(ctx context.Context, r *dfspb.UpdateBlockForPipelineRequest) (*dfspb.UpdateBlockForPipelineResponse, error) {
	lb, err := s.nn.updateBlockForPipeline(ctx, r)
	if err != nil {
		return nil, err
	}
	return &dfspb.UpdateBlockForPipelineResponse{Block: lb}, nil
}

func (s *clientRPC) UpdatePipeline(ctx context.Context, r *dfspb.UpdatePipelineRequest) (*dfspb.UpdatePipelineResponse, error) {
	return &dfspb.UpdatePipelineResponse{}, s.nn.updatePipeline(ctx, r)
}

func (s *clientRPC) RenewLease(ctx context.Context, r *dfspb.RenewLeaseRequest) (*dfspb.RenewLeaseResponse, error) {
	return &dfspb.RenewLeaseResponse{}, s.nn.renewLease(r.GetClientName(), callerOf(ctx))
}

func (s *clientRPC) GetBlockLocations(ctx context.Context, r *dfspb.GetBlockLocationsRequest) (*dfspb.GetBlockLocationsResponse, error) {
	lbs, err := s.nn.blockLocations(ctx, r)
	if err != nil {
		return nil, err
	}
	return &dfspb.GetBlockLocationsResponse{Locations: lbs}, nil
}

func (s *clientRPC) GetFileInfo(ctx context.Context, r *dfspb.GetFileInfoRequest) (*dfspb.GetFileInfoResponse, error) {
	st, err := s.nn.fileInfo(ctx, r.GetPath())
	if err != nil {
		return nil, err
	}
	return &dfspb.GetFileInfoResponse{Status: st}, nil
}

func (s *clientRPC) GetListing(ctx context.Context, r *dfspb.GetListingRequest) (*dfspb.GetListingResponse, error) {
	return s.nn.listing(ctx, r)
}

func (s *clientRPC) Delete(ctx context.Context, r *dfspb.DeleteRequest) (*dfspb.DeleteResponse, error) {
	return atMostOnce(ctx, s.nn, "delete", func(ctx context.Context) (*dfspb.DeleteResponse, error) {
		if err := s.nn.delete(ctx, r); err != nil {
			return nil, err
		}
		return &dfspb.DeleteResponse{Deleted: true}, nil
	})
}

func (s *clientRPC) Rename(ctx context.Context, r *dfspb.RenameRequest) (*dfspb.RenameResponse, error) {
	return atMostOnce(ctx, s.nn, "rename", func(ctx context.Context) (*dfspb.RenameResponse, error) {
		if err := s.nn.rename(ctx, r); err != nil {
			return nil, err
		}
		return &dfspb.RenameResponse{}, nil
	})
}

func (s *clientRPC) SetReplication(ctx context.Context, r *dfspb.SetReplicationRequest) (*dfspb.SetReplicationResponse, error) {
	return &dfspb.SetReplicationResponse{}, s.nn.setReplication(ctx, r)
}

func (s *clientRPC) SetPermission(ctx context.Context, r *dfspb.SetPermissionRequest) (*dfspb.SetPermissionResponse, error) {
	return &dfspb.SetPermissionResponse{}, s.nn.setPermission(ctx, r)
}

func (s *clientRPC) SetOwner(ctx context.Context, r *dfspb.SetOwnerRequest) (*dfspb.SetOwnerResponse, error) {
	return &dfspb.SetOwnerResponse{}, s.nn.setOwner(ctx, r)
}

func (s *clientRPC) SetTimes(ctx context.Context, r *dfspb.SetTimesRequest) (*dfspb.SetTimesResponse, error) {
	return &dfspb.SetTimesResponse{}, s.nn.setTimes(ctx, r)
}

func (s *clientRPC) SetQuota(ctx context.Context, r *dfspb.SetQuotaRequest) (*dfspb.SetQuotaResponse, error) {
	return &dfspb.SetQuotaResponse{}, s.nn.setQuota(ctx, r)
}

// CreateSymlink refuses, as HDFS does with symlinks disabled (its
// default): the namespace has no link inodes.
func (s *clientRPC) CreateSymlink(ctx context.Context, r *dfspb.CreateSymlinkRequest) (*dfspb.CreateSymlinkResponse, error) {
	return nil, status.Errorf(codes.Unimplemented, "createSymlink %s: Symlinks not supported", r.GetLink())
}

func (s *clientRPC) SetXAttr(ctx context.Context, r *dfspb.SetXAttrRequest) (*dfspb.SetXAttrResponse, error) {
	return atMostOnce(ctx, s.nn, "setXAttr", func(ctx context.Context) (*dfspb.SetXAttrResponse, error) {
		return &dfspb.SetXAttrResponse{}, s.nn.setXAttr(ctx, r)
	})
}

func (s *clientRPC) RemoveXAttr(ctx context.Context, r *dfspb.RemoveXAttrRequest) (*dfspb.RemoveXAttrResponse, error) {
	return atMostOnce(ctx, s.nn, "removeXAttr", func(ctx context.Context) (*dfspb.RemoveXAttrResponse, error) {
		return &dfspb.RemoveXAttrResponse{}, s.nn.removeXAttr(ctx, r)
	})
}

func (s *clientRPC) GetXAttrs(ctx context.Context, r *dfspb.GetXAttrsRequest) (*dfspb.GetXAttrsResponse, error) {
	return s.nn.getXAttrs(ctx, r)
}

func (s *clientRPC) ListXAttrs(ctx context.Context, r *dfspb.ListXAttrsRequest) (*dfspb.ListXAttrsResponse, error) {
	return s.nn.listXAttrs(ctx, r)
}

func (s *clientRPC) GetContentSummary(ctx context.Context, r *dfspb.GetContentSummaryRequest) (*dfspb.GetContentSummaryResponse, error) {
	return s.nn.contentSummary(ctx, r.GetPath())
}

func (s *clientRPC) ReportBadBlocks(ctx context.Context, r *dfspb.ReportBadBlocksRequest) (*dfspb.ReportBadBlocksResponse, error) {
	return &dfspb.ReportBadBlocksResponse{}, s.nn.clientBadBlocks(ctx, r)
}

func (s *clientRPC) GetDatanodeReport(ctx context.Context, r *dfspb.GetDatanodeReportRequest) (*dfspb.GetDatanodeReportResponse, error) {
	return &dfspb.GetDatanodeReportResponse{Datanodes: s.nn.datanodeReport(r.GetState())}, nil
}

func (s *clientRPC) Fsck(ctx context.Context, r *dfspb.FsckRequest) (*dfspb.FsckResponse, error) {
	return s.nn.fsck(ctx, r.GetPath(), r.GetIncludeDirectories())
}

func (s *clientRPC) GetServerDefaults(ctx context.Context, r *dfspb.GetServerDefaultsRequest) (*dfspb.GetServerDefaultsResponse, error) {
	return s.nn.serverDefaults(), nil
}

// Msync answers with nothing but the state id every reply to a client
// that sends one carries (observer.go): the interceptor has refused it on
// a standby and verified the active's leadership as for a namespace read
// (linearRead), so that state covers every edit acknowledged before the
// call. HDFS's msync, which its clients call before their first read
// from an observer.
func (s *clientRPC) Msync(ctx context.Context, r *dfspb.MsyncRequest) (*dfspb.MsyncResponse, error) {
	return &dfspb.MsyncResponse{}, nil
}

// GetHAStatus: without HA a namenode is the active one of a group of
// itself, at term 0.
func (s *clientRPC) GetHAStatus(ctx context.Context, r *dfspb.GetHAStatusRequest) (*dfspb.GetHAStatusResponse, error) {
	if h := s.nn.ha; h != nil && h.terminating.Load() {
		// A tool that saw "standby" here would take the member for one
		// that has rejoined the group, a moment before it exits.
		return nil, errUnavailable("getHAStatus: namenode %s is terminating: it lost the leadership of its HA group with edits not known committed and reloads from the group when restarted", s.nn.cfg.HA.ID)
	}
	return s.nn.haStatus(), nil
}

func (s *clientRPC) ClientHeartbeat(ctx context.Context, r *dfspb.ClientHeartbeatRequest) (*dfspb.ClientHeartbeatResponse, error) {
	if r.GetClientName() == "" {
		return nil, errInvalid("clientHeartbeat: client_name is required")
	}
	samples := make([]speeds.Sample, len(r.GetSamples()))
	for i, sm := range r.GetSamples() {
		samples[i] = speeds.Sample{Datanode: sm.GetDatanodeId(), Bytes: sm.GetBytes(), Nanos: sm.GetNanos(), EndUnixMs: sm.GetEndUnixMs()}
	}
	now := s.nn.clock()
	s.nn.speeds.Record(r.GetClientName(), hostKey(peerHost(ctx), r.GetClientHost()), samples, now)
	s.nn.metrics.speedSamples.Add(float64(len(samples)))
	// A client that reports is alive: its leases stay.
	s.nn.mu.Lock()
	s.nn.leases.renew(r.GetClientName(), now)
	s.nn.mu.Unlock()
	return &dfspb.ClientHeartbeatResponse{}, nil
}

func (s *clientRPC) GetSpeeds(ctx context.Context, r *dfspb.GetSpeedsRequest) (*dfspb.GetSpeedsResponse, error) {
	var out []*dfspb.SpeedRecord
	for _, rec := range s.nn.speeds.Records(r.GetClientName()) {
		out = append(out, &dfspb.SpeedRecord{
			ClientName: rec.Host, DatanodeId: rec.Datanode, RecentBytesPerSec: rec.Recent,
			HistoricalBytesPerSec: rec.Historical, Samples: rec.Samples, LastUnixMs: rec.LastUnixMs,
		})
	}
	return &dfspb.GetSpeedsResponse{Records: out}, nil
}

func (s *clientRPC) SetSafeMode(ctx context.Context, r *dfspb.SetSafeModeRequest) (*dfspb.SetSafeModeResponse, error) {
	return s.nn.setSafeMode(ctx, r.GetAction())
}

// Caching (cachemgr): methodRules decides who may call; the pool and
// directive changes are authorized in their mutation (cacheView.Commit),
// a cache access once its block is known (mayCacheBlockLocked).

func (s *clientRPC) AddCachePool(ctx context.Context, r *dfspb.AddCachePoolRequest) (*dfspb.AddCachePoolResponse, error) {
	return atMostOnce(ctx, s.nn, "addCachePool", func(ctx context.Context) (*dfspb.AddCachePoolResponse, error) {
		return &dfspb.AddCachePoolResponse{}, s.nn.cache.AddPool(ctx, callerOf(ctx), r.GetPool())
	})
}

func (s *clientRPC) RemoveCachePool(ctx context.Context, r *dfspb.RemoveCachePoolRequest) (*dfspb.RemoveCachePoolResponse, error) {
	return atMostOnce(ctx, s.nn, "removeCachePool", func(ctx context.Context) (*dfspb.RemoveCachePoolResponse, error) {
		return &dfspb.RemoveCachePoolResponse{}, s.nn.cache.RemovePool(ctx, callerOf(ctx), r.GetName())
	})
}

func (s *clientRPC) ListCachePools(ctx context.Context, r *dfspb.ListCachePoolsRequest) (*dfspb.ListCachePoolsResponse, error) {
	return &dfspb.ListCachePoolsResponse{Pools: s.nn.cache.ListPools()}, nil
}

func (s *clientRPC) AddCacheDirective(ctx context.Context, r *dfspb.AddCacheDirectiveRequest) (*dfspb.AddCacheDirectiveResponse, error) {
	return atMostOnce(ctx, s.nn, "addCacheDirective", func(ctx context.Context) (*dfspb.AddCacheDirectiveResponse, error) {
		id, err := s.nn.cache.AddDirective(ctx, callerOf(ctx), r.GetDirective())
		if err != nil {
			return nil, err
		}
		return &dfspb.AddCacheDirectiveResponse{Id: id}, nil
	})
}

func (s *clientRPC) RemoveCacheDirective(ctx context.Context, r *dfspb.RemoveCacheDirectiveRequest) (*dfspb.RemoveCacheDirectiveResponse, error) {
	return atMostOnce(ctx, s.nn, "removeCacheDirective", func(ctx context.Context) (*dfspb.RemoveCacheDirectiveResponse, error) {
		return &dfspb.RemoveCacheDirectiveResponse{}, s.nn.cache.RemoveDirective(ctx, callerOf(ctx), r.GetId())
	})
}

func (s *clientRPC) ListCacheDirectives(ctx context.Context, r *dfspb.ListCacheDirectivesRequest) (*dfspb.ListCacheDirectivesResponse, error) {
	ds, err := s.nn.cache.ListDirectives(r)
	if err != nil {
		return nil, err
	}
	return &dfspb.ListCacheDirectivesResponse{Directives: ds}, nil
}

func (s *clientRPC) CacheAccess(ctx context.Context, r *dfspb.CacheAccessRequest) (*dfspb.CacheAccessResponse, error) {
	c := callerOf(ctx)
	return s.nn.cache.Access(r, c.User, func(b *blockmap.Block) error { return s.nn.mayCacheBlockLocked(c, b) })
}

func (s *clientRPC) JobCacheStatus(ctx context.Context, r *dfspb.JobCacheStatusRequest) (*dfspb.JobCacheStatusResponse, error) {
	return s.nn.cache.JobStatus(r), nil
}

func (s *clientRPC) GetCacheStats(ctx context.Context, r *dfspb.GetCacheStatsRequest) (*dfspb.GetCacheStatsResponse, error) {
	st := s.nn.cache.Stats()
	// The running jobs (their ids and cached input) are the services'
	// to see, as the resource manager shows a user only their own jobs;
	// the namenode cannot tell whose a job is.
	s.nn.mu.RLock()
	service := s.nn.ident.isService(callerOf(ctx), s.nn.state.Tree())
	s.nn.mu.RUnlock()
	if !service {
		st.Jobs = nil
		// Another user's estimates name their apps and how they read.
		mine := st.AffinityEstimates[:0]
		for _, e := range st.AffinityEstimates {
			if e.GetUser() == callerOf(ctx).User {
				mine = append(mine, e)
			}
		}
		st.AffinityEstimates = mine
	}
	return st, nil
}

// datanodeRPC serves DatanodeProtocol.
type datanodeRPC struct {
	dfspb.UnimplementedDatanodeProtocolServer
	nn *NameNode
}

func (s *datanodeRPC) RegisterDatanode(ctx context.Context, r *dfspb.RegisterDatanodeRequest) (*dfspb.RegisterDatanodeResponse, error) {
	info, err := s.nn.registerDatanode(r, peerHost(ctx))
	if err != nil {
		return nil, err
	}
	keys, _ := s.nn.exportKeys()
	return &dfspb.RegisterDatanodeResponse{Datanode: info, BlockKeys: keys}, nil
}

func (s *datanodeRPC) SendHeartbeat(ctx context.Context, r *dfspb.HeartbeatRequest) (*dfspb.HeartbeatResponse, error) {
	return s.nn.heartbeat(r), nil
}

func (s *datanodeRPC) BlockReport(ctx context.Context, r *dfspb.BlockReportRequest) (*dfspb.BlockReportResponse, error) {
	return &dfspb.BlockReportResponse{}, s.nn.blockReport(r)
}

func (s *datanodeRPC) BlockReceivedAndDeleted(ctx context.Context, r *dfspb.BlockReceivedAndDeletedRequest) (*dfspb.BlockReceivedAndDeletedResponse, error) {
	return &dfspb.BlockReceivedAndDeletedResponse{}, s.nn.blockReceivedAndDeleted(r)
}

func (s *datanodeRPC) ReportBadBlocks(ctx context.Context, r *dfspb.DatanodeReportBadBlocksRequest) (*dfspb.DatanodeReportBadBlocksResponse, error) {
	return &dfspb.DatanodeReportBadBlocksResponse{}, s.nn.datanodeBadBlocks(r)
}

func (s *datanodeRPC) CommitBlockSynchronization(ctx context.Context, r *dfspb.CommitBlockSynchronizationRequest) (*dfspb.CommitBlockSynchronizationResponse, error) {
	return &dfspb.CommitBlockSynchronizationResponse{}, s.nn.commitBlockSync(r)
}
