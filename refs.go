package ckpt

// The store's ref names: HEAD, and one namespace per kind of name.
const (
	headName       = "HEAD"
	branchPrefix   = "branches/"
	tagPrefix      = "tags/"
	snapshotPrefix = "snapshots/"
)

// refNamespaces are the namespaces a revision name is looked up in, in
// order: a snapshot, then a tag, then a branch.
var refNamespaces = []string{snapshotPrefix, tagPrefix, branchPrefix}

// branchRef, tagRef and snapshotRef are the ref names of a branch, a tag
// and a snapshot.
func branchRef(name string) string   { return branchPrefix + name }
func tagRef(name string) string      { return tagPrefix + name }
func snapshotRef(name string) string { return snapshotPrefix + name }
