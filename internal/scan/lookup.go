package scan

import (
	"sort"
	"strings"

	"github.com/seed1cedbf7c/ckpt/internal/object"
)

// FileStat is what the scan that wrote a cache saw of one file or symlink.
type FileStat struct {
	Mode         uint32 // object mode: file with permission bits, or symlink
	Size         int64
	Mtime, Ctime int64
	Ino, Dev     uint64
	// Racy: the file changed in the same clock tick as the scan began, so
	// equal stat data does not prove equal content (git's racy rule).
	Racy bool
}

// Lookup returns the cached stat data of the file or symlink rel, decoding
// the blocks of each directory once (a Lookup holds them until it is
// dropped). It returns false when the cache does not hold rel.
func (c *Cache) Lookup() func(rel string) (FileStat, bool) {
	blocks := map[string][]cachedEntry{}
	return func(rel string) (FileStat, bool) {
		if c == nil {
			return FileStat{}, false
		}
		dir, name := "", rel
		if i := strings.LastIndexByte(rel, '/'); i >= 0 {
			dir, name = rel[:i], rel[i+1:]
		}
		es, ok := blocks[dir]
		if !ok {
			_, es, _ = c.block(dir)
			// Copy the names: they point into the mapping.
			for i := range es {
				es[i].name = strings.Clone(es[i].name)
			}
			blocks[dir] = es
		}
		i := sort.Search(len(es), func(i int) bool { return es[i].name >= name })
		if i == len(es) || es[i].name != name || object.IsDir(es[i].mode) {
			return FileStat{}, false
		}
		e := es[i]
		return FileStat{Mode: e.mode, Size: e.size, Mtime: e.mtime, Ctime: e.ctime, Ino: e.ino, Dev: e.dev,
			Racy: e.mtime >= c.Clock || e.ctime >= c.Clock}, true
	}
}
