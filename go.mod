module github.com/tenancy-dev/tenancy

go 1.26.0

require (
	github.com/google/go-cmp v0.7.0 // indirect
	github.com/pelletier/go-toml/v2 v2.4.3 // indirect
	go.yaml.in/yaml/v2 v2.4.4 // indirect
	sigs.k8s.io/kueue v0.17.0 // indirect
	sigs.k8s.io/kustomize/kyaml v0.21.2 // indirect
	sigs.k8s.io/yaml v1.6.0 // indirect
)
