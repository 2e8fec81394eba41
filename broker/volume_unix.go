//go:build unix

package broker

import "golang.org/x/sys/unix"

// volumeBytes is the total and usable size of the volume holding dir, as
// Kafka's FileStore.getTotalSpace and getUsableSpace (-1, -1 when unknown).
func volumeBytes(dir string) (total, usable int64) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return -1, -1
	}
	return int64(st.Blocks) * int64(st.Bsize), int64(st.Bavail) * int64(st.Bsize)
}
