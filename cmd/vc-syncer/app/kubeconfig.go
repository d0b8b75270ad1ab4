package app

import (
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// clientcmdapiMinifyFlatten keeps only the current context of cfg and embeds every file it
// references (certificates, keys).
func clientcmdapiMinifyFlatten(cfg *clientcmdapi.Config) error {
	if err := clientcmdapi.MinifyConfig(cfg); err != nil {
		return err
	}
	return clientcmdapi.FlattenConfig(cfg)
}
