// Package bench generates the benchmark corpora and agent "turns" used by
// ckpt's Go benchmarks and by bench/compare.sh, which times ckpt against
// the git-based snapshot methods it replaces. See docs/benchmarks.md.
package bench

import (
	"fmt"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
)

var words = strings.Fields(`func return if else for range var const type struct interface map
chan go defer select case switch package import error nil true false string int byte
rune len append make new copy delete panic recover context ctx err value result index
buffer reader writer client server request response handler config option path file`)

// Corpus describes a generated tree.
type Corpus struct {
	Files int
	Bytes int64
}

// Generate writes a deterministic tree of n files into dir: about four
// levels of directories (10 x 10 x 10 leaves for 100k files, about 100
// files each) of source-like text files whose sizes follow a log-normal
// distribution with a mean near 3.7 KB (100k files ≈ 367 MB), with a few
// executables and binary files.
func Generate(dir string, n int, seed uint64) (Corpus, error) {
	return generate(dir, n, seed, func(r *rand.Rand) int {
		return min(int(math.Exp(7.7+r.NormFloat64())), 256<<10)
	})
}

// GenerateTiny writes a tree laid out as Generate's, of n tiny files:
// 0 to 200 bytes each, uniformly (1M files ≈ 100 MB), where the cost of a
// checkpoint is all in the number of files, not their bytes.
func GenerateTiny(dir string, n int, seed uint64) (Corpus, error) {
	return generate(dir, n, seed, func(r *rand.Rand) int { return r.IntN(201) })
}

func generate(dir string, n int, seed uint64, size func(*rand.Rand) int) (Corpus, error) {
	r := rand.New(rand.NewPCG(seed, 0x62656e63))
	var c Corpus
	perLeaf := 100
	leaves := (n + perLeaf - 1) / perLeaf
	for i := 0; i < n; i++ {
		leaf := i % leaves
		p := filepath.Join(dir, fmt.Sprintf("pkg%02d", leaf/100%100), fmt.Sprintf("mod%d", leaf/10%10),
			fmt.Sprintf("part%d", leaf%10), fileName(i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return c, err
		}
		data := content(r, size(r), i%97 == 0)
		mode := os.FileMode(0o644)
		if i%53 == 0 {
			mode = 0o755
		}
		if err := os.WriteFile(p, data, mode); err != nil {
			return c, err
		}
		c.Files++
		c.Bytes += int64(len(data))
	}
	return c, nil
}

func fileName(i int) string {
	switch i % 5 {
	case 0:
		return fmt.Sprintf("file%d.go", i)
	case 1:
		return fmt.Sprintf("file%d_test.go", i)
	case 2:
		return fmt.Sprintf("doc%d.md", i)
	case 3:
		return fmt.Sprintf("data%d.json", i)
	}
	return fmt.Sprintf("util%d.txt", i)
}

func content(r *rand.Rand, size int, binary bool) []byte {
	b := make([]byte, 0, size+80)
	if binary {
		for len(b) < size {
			b = append(b, byte(r.UintN(256)))
		}
		return b[:size]
	}
	for len(b) < size {
		indent := r.IntN(4)
		for j := 0; j < indent; j++ {
			b = append(b, '\t')
		}
		nw := 2 + r.IntN(9)
		for j := 0; j < nw; j++ {
			if j > 0 {
				b = append(b, ' ')
			}
			b = append(b, words[r.IntN(len(words))]...)
		}
		b = append(b, '\n')
	}
	return b[:size]
}

// TurnFiles is the number of files one agent turn touches.
const TurnFiles = 20

// Turn applies agent turn number t (1, 2, ...) to a tree of n files made
// by Generate: 18 files edited in place (a few lines changed and one
// appended), one file added and one deleted, spread over the tree. It
// returns the paths it touched.
func Turn(dir string, n, t int) ([]string, error) {
	r := rand.New(rand.NewPCG(uint64(t), 0x7475726e))
	var touched []string
	leaves := (n + 99) / 100
	path := func(i int) string {
		leaf := i % leaves
		return filepath.Join(fmt.Sprintf("pkg%02d", leaf/100%100), fmt.Sprintf("mod%d", leaf/10%10),
			fmt.Sprintf("part%d", leaf%10), fileName(i))
	}
	for k := 0; k < TurnFiles-2; k++ {
		i := r.IntN(n)
		if err := editFile(r, filepath.Join(dir, path(i)), t); err != nil {
			if os.IsNotExist(err) {
				continue // deleted by an earlier turn
			}
			return nil, err
		}
		touched = append(touched, path(i))
	}
	added := filepath.Join(filepath.Dir(path(r.IntN(n))), fmt.Sprintf("turn%d_new.go", t))
	if err := os.WriteFile(filepath.Join(dir, added), content(r, 2000, false), 0o644); err != nil {
		return nil, err
	}
	touched = append(touched, added)
	del := path(r.IntN(n))
	if err := os.Remove(filepath.Join(dir, del)); err == nil {
		touched = append(touched, del)
	}
	return touched, nil
}

// Files lists the regular files below dir (relative paths, sorted),
// skipping .git.
func Files(dir string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return nil
	})
	return out, err
}

// TurnIn applies agent turn t to any tree whose files are listed in files
// (see Files): 18 files edited in place, one added, one deleted, chosen
// deterministically from t. It returns the updated list.
func TurnIn(dir string, files []string, t int) ([]string, error) {
	r := rand.New(rand.NewPCG(uint64(t), 0x7475726e))
	if len(files) < TurnFiles {
		return files, fmt.Errorf("tree has only %d files", len(files))
	}
	for k := 0; k < TurnFiles-2; k++ {
		if err := editFile(r, filepath.Join(dir, files[r.IntN(len(files))]), t); err != nil {
			return nil, err
		}
	}
	added := filepath.Join(filepath.Dir(files[r.IntN(len(files))]), fmt.Sprintf("turn%d_new.go", t))
	if err := os.WriteFile(filepath.Join(dir, added), content(r, 2000, false), 0o644); err != nil {
		return nil, err
	}
	i := r.IntN(len(files))
	if err := os.Remove(filepath.Join(dir, files[i])); err != nil {
		return nil, err
	}
	out := append(append([]string(nil), files[:i]...), files[i+1:]...)
	return append(out, added), nil
}

// editFile changes three random lines of a file and appends one, as an
// agent's edit would.
func editFile(r *rand.Rand, p string, t int) error {
	data, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	lines := strings.SplitAfter(string(data), "\n")
	for e := 0; e < 3 && len(lines) > 0; e++ {
		lines[r.IntN(len(lines))] = fmt.Sprintf("\t// turn %d edit %d %x\n", t, e, r.Uint64())
	}
	lines = append(lines, fmt.Sprintf("// appended by turn %d\n", t))
	return os.WriteFile(p, []byte(strings.Join(lines, "")), 0o644)
}

// DirSize is the size of the regular files below path (what a store or a
// bucket directory takes).
func DirSize(path string) int64 {
	var n int64
	filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}
