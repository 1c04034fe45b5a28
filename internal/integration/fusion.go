package integration

// Fusion is a backend's step in the fusion form of the series
// (docs/fusion.md): no new op, the backend matches llama.cpp's own decode
// graph. Its new files are rendered from ops/fusion's description with the
// backend's spelling; its sections are literal lines, placed by anchors as
// a manifest's are. Like a manifest it has no place of its own: its step
// is where its backend is in the registry.
type Fusion struct {
	Backend       string
	Subject, Body string
	Dir           string // where the new files go, below the ggml root
	// Off is the environment setting that turns the backend's fusions off
	// ("GGML_CUDA_DISABLE_FUSION=1"), which the tests' message names so
	// that a reader can run the cases unfused.
	Off      string
	Files    func() ([]FusionFile, error)
	Sections []Section
	// Texts are the step's generated texts (the matchers and dispatch,
	// where a backend splices them into an existing file), by the name a
	// section's Text.Section gives.
	Texts func() (map[string]string, error)
	// Base, where set, is the ops form's manifest whose kernels the step
	// reuses: its new files (the kernels, below Base.Dir) come with the
	// step, and a Text.Section that Texts lacks is Base's.
	Base   *Manifest
	Budget int // inserted lines the step may add
	// Revisions are the step's sections for tree revisions, as a
	// manifest's: a revision's sections apply where its probe holds, the
	// step's sections it replaces only where it does not.
	Revisions []Revision
	// Kernels, where set, is a step of its own before this one: the
	// kernels the dispatch runs and their build registration, so that
	// each patch fits its budget. The tree builds after it (a kernel no
	// one calls yet is a file nothing includes, or a pipeline nothing
	// records); its files and sections are not repeated here. Its Backend,
	// Dir and Budget are this step's (Parts).
	Kernels *Fusion
	// ForTree, where set, is f as the tree being patched needs it, as a
	// manifest's (Manifest.ForTree).
	ForTree func(f *Fusion, read ReadFile) (*Fusion, error)
}

// Parts are f's patches in series order: the kernels' step, where f has
// one, with f's Backend, Dir and Budget, then f.
func (f *Fusion) Parts() []*Fusion {
	if f.Kernels == nil {
		return []*Fusion{f}
	}
	k := *f.Kernels
	k.Backend, k.Dir, k.Budget = f.Backend, f.Dir, f.Budget
	return []*Fusion{&k, f}
}

// FusionFile is a new file of a fusion step, named below Dir.
type FusionFile struct {
	Name string
	Data []byte
}
