package watch

import "sort"

// # Which entries changed
//
// Besides which directories changed, the daemon keeps which of their
// entries did: every event of a watched directory names the entry it is
// about (written, attributes changed, created, removed, moved in or out),
// so an entry of a changed directory with no event since a token has the
// stat data it had then, as a directory with no event has all its
// entries' (the same trust, one level finer). An answer names them per
// directory (Answer.Names), and a save stats only those; the others come
// from the stat cache. That saves a stat of every entry of every changed
// directory: a 20-file turn in directories of 100 files stats 20 files,
// not 2,000.
//
// A directory is changed "whole" (every entry may have changed) when an
// event names no entry (one about the directory itself), when it was
// walked when watched (created, moved in, or newly listed), or when more
// than maxDirNames of its entries changed since its last whole change.
// Names are complete only for tokens at or after namesFloor: past
// maxChangedNames names in all, the daemon drops them and every directory
// changed before then is whole for older tokens.

// maxDirNames bounds the entries the daemon names per directory.
var maxDirNames = 256

// maxChangedNames bounds the names the daemon keeps in all.
var maxChangedNames = 1 << 16

// dirNames is what the daemon keeps of one directory's changed entries.
type dirNames struct {
	whole uint64            // the seq of its last whole change
	names map[string]uint64 // entry -> the seq of its last event, after whole
}

// changeWhole records that any entry of rel may have changed (d.mu held).
func (d *Daemon) changeWhole(rel string) {
	d.seq++
	d.dirty[rel] = d.seq
	c := d.changedDir(rel)
	c.whole = d.seq
	d.nameCount -= len(c.names)
	c.names = nil
}

// changeName records an event of entry name of rel (d.mu held).
func (d *Daemon) changeName(rel, name string) {
	d.seq++
	d.dirty[rel] = d.seq
	c := d.changedDir(rel)
	if c.names == nil {
		c.names = map[string]uint64{}
	}
	if _, ok := c.names[name]; !ok {
		d.nameCount++
	}
	c.names[name] = d.seq
	switch {
	case len(c.names) > maxDirNames:
		c.whole = d.seq
		d.nameCount -= len(c.names)
		c.names = nil
	case d.nameCount > maxChangedNames:
		clear(d.changed)
		d.nameCount = 0
		d.namesFloor = d.seq
	}
}

func (d *Daemon) changedDir(rel string) *dirNames {
	c := d.changed[rel]
	if c == nil {
		c = &dirNames{}
		d.changed[rel] = c
	}
	return c
}

// changedNames returns the entries of dirty directory rel that changed
// after since, sorted, or false when any entry may have (d.mu held).
func (d *Daemon) changedNames(rel string, since uint64) ([]string, bool) {
	c := d.changed[rel]
	if c == nil || since < d.namesFloor || since < c.whole {
		return nil, false
	}
	var out []string
	for name, seq := range c.names {
		if seq > since {
			out = append(out, name)
		}
	}
	if len(out) == 0 {
		// Dirty after since, yet no name after it: never so, but the
		// safe reading is "any entry".
		return nil, false
	}
	sort.Strings(out)
	return out, true
}

// pruneNames forgets what no answer for a token at since or later needs
// (d.mu held).
func (d *Daemon) pruneNames(since uint64) {
	for rel, c := range d.changed {
		if seq, ok := d.dirty[rel]; !ok || seq <= since {
			d.nameCount -= len(c.names)
			delete(d.changed, rel)
			continue
		}
		for name, seq := range c.names {
			if seq <= since {
				delete(c.names, name)
				d.nameCount--
			}
		}
	}
}
