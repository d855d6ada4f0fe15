// Package gitmirror is the git backend's plumbing: it exports ckpt
// checkpoints into the workspace's own git repository as detached commits
// and keeps a namespace of refs (by default refs/ckpt) in line with the
// store, without running git and without touching anything of the user's:
// HEAD, branches, the index, the stash, config and hooks are never read for
// writing nor written.
//
// # Objects
//
// A checkpoint becomes a commit without parents whose tree is built from
// ckpt's own trees (no index, no git add): a regular file becomes a blob
// with mode 100755 if any execute bit is set and 100644 otherwise, a symlink
// a blob of its target with mode 120000, a directory a tree (040000), and a
// nested repository recorded in the checkpoint's [MetaGitlinks] a gitlink
// (160000) naming its checked-out commit. Entries are sorted in git's order.
// Author and committer are "ckpt <ckpt@localhost>" at the checkpoint's time;
// the message is the checkpoint's message followed by the trailer
// "Ckpt-Checkpoint: <64-hex id>". A persistent map (gitmap.db, a SQLite
// cache in the store directory) remembers which git object each ckpt blob
// and tree became, so exporting a checkpoint writes only the objects that
// changed since the last one.
//
// # Packs
//
// Objects are never written loose (past gc.auto loose objects git runs
// `git gc --auto` in the middle of the user's work): each export writes the
// objects it adds as one pack with its index, durably (temporary file,
// fsync, rename, the index after the pack), before any ref names them. The
// mirror keeps its packs few by merging the smaller ones (never dropping an
// object: pruning is git gc's), and a sync that finds gone a pack it relied
// on (git gc ran) re-checks every object the refs need and writes what is
// missing. See packs.go and docs/git-backend.md.
//
// # Refs
//
// [Mirror.Sync] sets <prefix>/snapshots/NAME for every snapshot and
// <prefix>/timeline/<12-hex id> for the newest checkpoints of the timeline,
// deleting the ones that fell off. Refs are updated with git's own locking
// protocol (<ref>.lock, then rename), and the mirror moves or deletes only
// refs it wrote (recorded in the map, or recognizable by their trailer).
package gitmirror
