package webhdfs

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"smarth/internal/rpc/dfspb"
)

// Erasure coding and the storage policy satisfier: features of the
// WebHDFS page that smarth does not have. Each answers
// as a Hadoop 3.4 namenode does in the configuration that matches
// smarth (every file replicated, no EC policy enabled, the satisfier
// off), so clients see a cluster that lacks the feature rather than an
// unknown operation.

// ecPolicy is one of Hadoop's system erasure coding policies
// (SystemErasureCodingPolicies), by id.
type ecPolicy struct {
	id                     int
	name, codec            string
	dataUnits, parityUnits int
}

const ecCellSize = 1024 * 1024

var systemECPolicies = []ecPolicy{
	{1, "RS-6-3-1024k", "rs", 6, 3},
	{2, "RS-3-2-1024k", "rs", 3, 2},
	{3, "RS-LEGACY-6-3-1024k", "rs-legacy", 6, 3},
	{4, "XOR-2-1-1024k", "xor", 2, 1},
	{5, "RS-10-4-1024k", "rs", 10, 4},
}

// replicationPolicy is the name HDFS accepts in SETECPOLICY to make a
// directory plainly replicated: what every smarth directory already is.
const replicationPolicy = "replication"

func (p ecPolicy) json() map[string]any {
	extra := map[string]any{}
	return map[string]any{
		"name": p.name, "id": p.id, "cellSize": ecCellSize, "codecName": p.codec,
		"numDataUnits": p.dataUnits, "numParityUnits": p.parityUnits,
		"schema": map[string]any{"codecName": p.codec, "numDataUnits": p.dataUnits,
			"numParityUnits": p.parityUnits, "extraOptions": extra},
		"extraOptions": extra, "replicationPolicy": false, "systemPolicy": true,
	}
}

func systemECPolicy(name string) (ecPolicy, bool) {
	i := slices.IndexFunc(systemECPolicies, func(p ecPolicy) bool { return p.name == name })
	if i < 0 {
		return ecPolicy{}, false
	}
	return systemECPolicies[i], true
}

const replicasOnly = "smarth stores replicated blocks only and has no erasure coding"

// getECPolicy: HDFS's getErasureCodingPolicy answers null for a
// replicated path (FSDirErasureCodingOp maps the replication policy to
// null), which WebHdfsFileSystem decodes as "no policy". A missing path
// is FileNotFoundException as there.
func (c *call) getECPolicy() error {
	if _, err := c.stat(c.path); err != nil {
		return err
	}
	return c.json(map[string]any{"ErasureCodingPolicy": nil})
}

// getECPolicies lists Hadoop's system policies as it would with all of
// them disabled (dfs.namenode.ec.system.default.policy cleared), not an
// empty list: Hadoop's getErasureCodingPolicies always returns every
// system policy with its state, and a client looking for RS-6-3-1024k
// should learn it exists but is DISABLED here, not that it is unknown.
func (c *call) getECPolicies() error {
	infos := make([]map[string]any, 0, len(systemECPolicies))
	for _, p := range systemECPolicies {
		infos = append(infos, map[string]any{"policy": p.json(), "state": "DISABLED"})
	}
	return c.json(map[string]any{"ErasureCodingPolicies": map[string]any{"ErasureCodingPolicyInfo": infos}})
}

func (c *call) ecPolicyParam() (string, error) {
	name := c.p.Str("ecpolicy")
	if name == "" {
		return "", paramError("ecpolicy", "an erasure coding policy name is required, e.g. RS-6-3-1024k")
	}
	return name, nil
}

func noSuchPolicy(name string) error {
	return Exception("HadoopIllegalArgumentException", fmt.Sprintf("The policy name %s does not exist", name))
}

// enableECPolicy refuses every system policy: enabling one would let a
// client believe files can be erasure coded here.
func (c *call) enableECPolicy() error {
	name, err := c.ecPolicyParam()
	if err != nil {
		return err
	}
	if _, ok := systemECPolicy(name); !ok {
		return noSuchPolicy(name)
	}
	return Exception("HadoopIllegalArgumentException", fmt.Sprintf("Policy %s cannot be enabled: %s", name, replicasOnly))
}

// disableECPolicy of a known policy succeeds with nothing to do, as
// Hadoop's disablePolicy does for a policy already disabled.
func (c *call) disableECPolicy() error {
	name, err := c.ecPolicyParam()
	if err != nil {
		return err
	}
	if _, ok := systemECPolicy(name); !ok {
		return noSuchPolicy(name)
	}
	return c.ok()
}

// ecTarget checks what HDFS's set/unsetErasureCodingPolicy check: the
// path exists, the caller may write it, and it is a directory.
func (c *call) ecTarget(verb string) error {
	st, err := c.stat(c.path)
	if err != nil {
		return err
	}
	if err := c.h.cfg.CheckAccess(c.ctx, c.path, 2); err != nil {
		return err
	}
	if st.GetType() != dfspb.FileType_DIRECTORY {
		return Exception("IOException", fmt.Sprintf("Attempt to %s an erasure coding policy for a file %s", verb, c.path))
	}
	return nil
}

// setECPolicy accepts "replication" (the state smarth directories are
// always in) and refuses every other name as HDFS refuses a policy that
// is not enabled.
func (c *call) setECPolicy() error {
	name, err := c.ecPolicyParam()
	if err != nil {
		return err
	}
	if err := c.ecTarget("set"); err != nil {
		return err
	}
	if strings.EqualFold(name, replicationPolicy) {
		return c.ok()
	}
	return Exception("HadoopIllegalArgumentException", fmt.Sprintf(
		"Policy '%s' does not match any enabled erasure coding policies: []. %s", name, replicasOnly))
}

// unsetECPolicy of a directory without a policy is a no-op in HDFS.
func (c *call) unsetECPolicy() error {
	if err := c.ecTarget("unset"); err != nil {
		return err
	}
	return c.ok()
}

// satisfyStoragePolicy answers as Hadoop 3.4 with its default
// dfs.storage.policy.satisfier.mode=none (FSNamesystem
// .validateStoragePolicySatisfy), before looking at the path.
func (c *call) satisfyStoragePolicy() error {
	return Exception("UnsupportedActionException", "Cannot request to satisfy storage policy "+
		"when storage policy satisfier feature has been disabled by admin. "+
		"Seek for an admin help to enable it or use Mover tool.")
}

// storageTypes are Hadoop's StorageType names; the quota-capable ones
// are all but RAM_DISK.
var storageTypes = []string{"RAM_DISK", "SSD", "DISK", "ARCHIVE", "PROVIDED", "NVDIMM"}

// setQuotaByStorageType sets (storagespacequota >= 0) or clears (-1) a
// directory's quota on one storage type, as NamenodeWebHdfsMethods calls
// setQuota(path, QUOTA_DONT_SET, quota, type). smarth's datanodes are all
// DISK: a DISK quota counts the space consumed, any other is never
// exceeded.
func (c *call) setQuotaByStorageType() error {
	st := strings.ToUpper(c.p.Str("storagetype"))
	if st == "" {
		return paramError("storagetype", "a storage type is required, e.g. DISK")
	}
	if !slices.Contains(storageTypes, st) {
		return IllegalArgument("No enum constant org.apache.hadoop.fs.StorageType." + st)
	}
	if !c.p.Has("storagespacequota") {
		return paramError("storagespacequota", "storagespacequota is required")
	}
	q, err := c.p.Long("storagespacequota", 0, -1)
	if err != nil {
		return err
	}
	if _, err := c.stat(c.path); err != nil {
		return err
	}
	if st == "RAM_DISK" {
		// HDFS's namenode answers this one with UnsupportedActionException.
		return Exception("UnsupportedActionException", "Quota by storage type is not supported for RAM_DISK")
	}
	if _, err := c.h.cfg.RPC.SetQuota(c.ctx, &dfspb.SetQuotaRequest{Path: c.path, NsQuota: math.MaxInt64, DsQuota: q, StorageType: st}); err != nil {
		return err
	}
	return c.ok()
}

// typeQuotaJSON is ContentSummary's and QuotaUsage's typeQuota as
// Hadoop's JsonUtil writes it: only the types with a quota, each with its
// quota and what counts against it.
func typeQuotaJSON(s *dfspb.GetContentSummaryResponse) map[string]any {
	m := map[string]any{}
	for _, tq := range s.GetTypeQuotas() {
		m[tq.GetStorageType()] = map[string]any{"consumed": tq.GetConsumed(), "quota": tq.GetQuota()}
	}
	return m
}
