// Package blocktoken issues and checks block access tokens, HDFS's
// BlockTokenSecretManager: the namenode signs, for one block and
// generation stamp, the access modes a caller may use, until when, as
// which user, and which datanode data addresses the holder may make a
// datanode dial; datanodes check the HMAC-SHA256 with the namenode's
// rolling block keys before every data-transfer op, so that knowing a
// block id is not enough to read, overwrite or copy it.
//
// The package decides nothing about who may have a token (the namenode's
// permission checks do) nor which op needs which mode (the datanode
// does). It keeps no state on disk: keys live in the namenode's memory,
// a restarted namenode rolls a fresh set and ships it to every datanode
// as it re-registers; tokens of the old set then fail and readers ask
// the namenode again, as in HDFS.
package blocktoken
