package webhdfs

import (
	"math"
	"net"
	"sort"
	"strconv"
	"strings"

	"smarth/internal/auth"
	"smarth/internal/rpc/dfspb"
)

// locatedBlocks answers GET_BLOCK_LOCATIONS with the namenode's
// GetBlockLocations as Hadoop's JsonUtil.toJsonString(LocatedBlocks)
// writes it: the raw ClientProtocol answer, block tokens included, which
// is what HDFS's own tools (and DFSClient over WebHDFS) read.
func (c *call) locatedBlocks() error {
	off, err := c.p.Long("offset", 0, 0)
	if err != nil {
		return err
	}
	length, err := c.p.Long("length", math.MaxInt64, 0)
	if err != nil {
		return err
	}
	r, err := c.h.cfg.RPC.GetBlockLocations(c.ctx, &dfspb.GetBlockLocationsRequest{
		Path: c.path, Offset: off, Length: length, ClientHost: clientHost(c.r)})
	if err != nil {
		return err
	}
	lbs := r.GetLocations()
	blocks := make([]map[string]any, 0, len(lbs.GetBlocks()))
	for _, lb := range lbs.GetBlocks() {
		blocks = append(blocks, locatedBlockJSON(lb))
	}
	// HDFS always names the file's last block, whatever the range. The
	// namenode's answer carries it only for a file being written, so for
	// a closed file it is asked for (and is complete by definition).
	lastBlock, complete := lbs.GetLastBlock(), lbs.GetLastBlockComplete()
	if !lbs.GetUnderConstruction() {
		complete = true
		if lastBlock == nil && lbs.GetFileLength() > 0 {
			tail, err := c.h.cfg.RPC.GetBlockLocations(c.ctx, &dfspb.GetBlockLocationsRequest{
				Path: c.path, Offset: lbs.GetFileLength() - 1, Length: 1, ClientHost: clientHost(c.r)})
			if err != nil {
				return err
			}
			if bs := tail.GetLocations().GetBlocks(); len(bs) > 0 {
				lastBlock = bs[len(bs)-1]
			}
		}
	}
	var last any // null when the file has no blocks, as in Hadoop
	if lastBlock != nil {
		last = locatedBlockJSON(lastBlock)
	}
	return c.json(map[string]any{"LocatedBlocks": map[string]any{
		"fileLength": lbs.GetFileLength(), "isUnderConstruction": lbs.GetUnderConstruction(),
		"locatedBlocks": blocks, "lastLocatedBlock": last, "isLastBlockComplete": complete,
	}})
}

// blockPoolID names smarth's single namespace where HDFS names a block
// pool; smarth has one pool per cluster.
const blockPoolID = "BP-smarth"

func locatedBlockJSON(lb *dfspb.LocatedBlock) map[string]any {
	b := lb.GetBlock()
	locs := make([]map[string]any, 0, len(lb.GetLocations()))
	types := make([]string, 0, len(lb.GetLocations()))
	byID := map[string]map[string]any{}
	for _, d := range lb.GetLocations() {
		m := datanodeJSON(d)
		locs, types = append(locs, m), append(types, "DISK") // smarth datanodes have one storage type
		byID[d.GetId()] = m
	}
	cached := []map[string]any{}
	ids := append([]string(nil), lb.GetCachedOn()...)
	sort.Strings(ids)
	for _, id := range ids {
		if m, ok := byID[id]; ok {
			cached = append(cached, m)
		}
	}
	var token map[string]any
	if t := lb.GetToken(); t != nil && len(t.GetIdentifier()) > 0 {
		token = map[string]any{"urlString": encodeBlockToken(t)}
	} else {
		// Hadoop sends an empty token when block tokens are off; its
		// encodeToUrlString of an empty token is "AAAAAA".
		token = map[string]any{"urlString": "AAAAAA"}
	}
	return map[string]any{
		"block": map[string]any{"blockPoolId": blockPoolID, "blockId": b.GetBlockId(),
			"numBytes": b.GetNumBytes(), "generationStamp": b.GetGenerationStamp()},
		"blockToken": token, "isCorrupt": lb.GetCorrupt(), "startOffset": lb.GetOffset(),
		"locations": locs, "storageTypes": types, "cachedLocations": cached,
	}
}

// datanodeJSON is JsonUtil.toJsonMap(DatanodeInfo).
func datanodeJSON(d *dfspb.DatanodeInfo) map[string]any {
	admin := "NORMAL"
	if d.GetState() == dfspb.DatanodeState_DECOMMISSIONING {
		admin = "DECOMMISSION_INPROGRESS"
	}
	rack := d.GetRack()
	if rack == "" {
		rack = "/default-rack"
	}
	return map[string]any{
		"ipAddr": d.GetIpAddr(), "name": net.JoinHostPort(d.GetIpAddr(), strconv.Itoa(int(d.GetDataPort()))),
		"hostName": d.GetHostname(), "storageID": d.GetId(), "xferPort": d.GetDataPort(),
		"infoPort": d.GetHttpPort(), "infoSecurePort": 0, "ipcPort": d.GetIpcPort(),
		"capacity": d.GetCapacity(), "dfsUsed": d.GetDfsUsed(), "remaining": d.GetRemaining(),
		"blockPoolUsed": d.GetDfsUsed(), "cacheCapacity": d.GetCacheCapacity(), "cacheUsed": d.GetCacheUsed(),
		"lastUpdate": d.GetLastHeartbeatUnixMs(), "lastUpdateMonotonic": d.GetLastHeartbeatUnixMs(),
		"xceiverCount": d.GetXceiverCount(), "networkLocation": strings.TrimSuffix(rack, "/"),
		"adminState": admin,
	}
}

// encodeBlockToken is Hadoop's Token.encodeToUrlString of a block token:
// the Writable form (identifier, password, kind, service, each length-
// prefixed by a WritableUtils vint) in unpadded URL-safe base64.
func encodeBlockToken(t *dfspb.BlockToken) string {
	return auth.HadoopToken{Identifier: t.GetIdentifier(), Password: t.GetPassword(), Kind: "HDFS_BLOCK_TOKEN"}.URLString()
}
