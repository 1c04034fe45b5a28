package toolchain

import (
	"reflect"
	"testing"
)

func TestParseClinfoList(t *testing.T) {
	in := "Platform #0: Portable Computing Language\n `-- Device #0: pthread-skylake-avx512-Intel(R) Xeon(R) Processor\n" +
		"Platform #1: Intel(R) OpenCL Graphics\n +-- Device #0: Intel(R) Arc(TM) A770 Graphics\n `-- Device #1: Intel(R) UHD Graphics 770\n" +
		"Platform #2: Empty\n"
	want := []OpenCLPlatform{
		{Name: "Portable Computing Language", Devices: []string{"pthread-skylake-avx512-Intel(R) Xeon(R) Processor"}},
		{Name: "Intel(R) OpenCL Graphics", Devices: []string{"Intel(R) Arc(TM) A770 Graphics", "Intel(R) UHD Graphics 770"}},
		{Name: "Empty", Devices: []string{}},
	}
	if got := parseClinfoList(in); !reflect.DeepEqual(got, want) {
		t.Errorf("parseClinfoList = %+v\nwant %+v", got, want)
	}
	if got := parseClinfoList(""); len(got) != 0 || got == nil {
		t.Errorf("no platforms: %#v, want an empty list", got)
	}
}
