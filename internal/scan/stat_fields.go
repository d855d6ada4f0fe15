package scan

import "golang.org/x/sys/unix"

func fromStat(st *unix.Stat_t) statInfo {
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
