module github.com/kernelgen/kernelgen

go 1.24

require (
	github.com/dave/jennifer v1.7.1
	github.com/spf13/cobra v1.10.2
)

require (
	github.com/google/go-cmp v0.7.0 // indirect
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/spf13/pflag v1.0.9 // indirect
)
