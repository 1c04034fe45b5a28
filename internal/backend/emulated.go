package backend

import (
	"path"
	"strings"

	"github.com/kernelgen/kernelgen/verify/emulate"
)

// Emulated are the op files among files (those whose path ends in ext),
// by op, as the host emulation takes them (verify/emulate.Check): the
// bytes build writes, header included, so the check runs what is written.
func Emulated(files []File, ext string) map[string]emulate.File {
	out := map[string]emulate.File{}
	for _, f := range files {
		if f.Op != "" && strings.HasSuffix(f.Path, ext) {
			out[f.Op] = emulate.File{Name: path.Base(f.Path), Data: f.Data}
		}
	}
	return out
}
