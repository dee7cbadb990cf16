package cluster

import "smarth/internal/bytesize"

// ParseBytes reads a size such as "1GiB", "200MiB", "64M", "512k" or
// "1048576" (bytesize.Parse: binary units, as in Hadoop's size flags).
func ParseBytes(s string) (int64, error) { return bytesize.Parse(s) }
