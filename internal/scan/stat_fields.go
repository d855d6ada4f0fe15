package scan

import "github.com/seed1cedbf7c/ckpt/internal/fsroot"

func fromStat(st *fsroot.Stat_t) statInfo {
	return statInfo{
		mode:  uint32(st.Mode),
		size:  st.Size,
		mtime: st.Mtim.Nano(),
		ctime: st.Ctim.Nano(),
		ino:   st.Ino,
		dev:   uint64(st.Dev),
		nlink: uint64(st.Nlink),
	}
}
