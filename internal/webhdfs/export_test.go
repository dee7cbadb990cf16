package webhdfs

// SetSnapshotDiffListingLimit shrinks GETSNAPSHOTDIFFLISTING pages so a
// test can page through a small diff; it returns the restore function.
func SetSnapshotDiffListingLimit(n int) func() {
	old := snapshotDiffListingLimit
	snapshotDiffListingLimit = n
	return func() { snapshotDiffListingLimit = old }
}
