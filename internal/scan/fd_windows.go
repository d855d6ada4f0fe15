package scan

import (
	"io"
	"os"

	"github.com/seed1cedbf7c/ckpt/internal/fsroot"
)

// errPlatform: the scan reads directories through descriptors (*at
// calls), which Windows lacks; Scan and Path fail with it up front.
var errPlatform error = &fsroot.UnsupportedError{What: "scanning a workspace"}

func closeFD(int) error                      { return errPlatform }
func lstatAt(int, string) (statInfo, error)  { return statInfo{}, errPlatform }
func fstat(int) (statInfo, error)            { return statInfo{}, errPlatform }
func lstatPath(string) (statInfo, error)     { return statInfo{}, errPlatform }
func readFileAt(int, string) ([]byte, error) { return nil, errPlatform }
func readlinkAt(int, string) ([]byte, error) { return nil, errPlatform }
func openTmpfile(string) (int, error)        { return -1, errPlatform }

// mapFile reads the file: the stat cache is read whole, not mapped.
func mapFile(f *os.File, size int64) (data []byte, unmap func(), err error) {
	data = make([]byte, size)
	if _, err := io.ReadFull(f, data); err != nil {
		return nil, nil, err
	}
	return data, func() {}, nil
}
