package hostemu

// CUDA's skin (internal/backend/cuda owns this file).

import "fmt"

// CUDA is CUDA C++ under hostemu/cuda.h.
var CUDA = &Lang{name: "cuda", skin: "hostemu/cuda.h", check: checkCUDA}

// checkCUDA rejects dynamic shared memory (extern __shared__), which has no
// host equivalent.
func checkCUDA(file string, toks []token) []string {
	var msgs []string
	for i, t := range toks {
		if t.text == "extern" && i+1 < len(toks) && toks[i+1].text == "__shared__" {
			msgs = append(msgs, fmt.Sprintf("%s:%d: error: dynamic shared memory (extern __shared__) is not supported by the host emulation; declare a sized __shared__ array", file, t.line))
		}
	}
	return msgs
}
