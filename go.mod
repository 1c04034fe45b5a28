module github.com/kernelgen/kernelgen

go 1.24

require github.com/dave/jennifer v1.7.1
