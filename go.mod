module github.com/perflab/perflab

go 1.26.8

require github.com/HdrHistogram/hdrhistogram-go v1.1.2 // indirect
