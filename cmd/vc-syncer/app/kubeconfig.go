package app

import (
	"errors"

	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// clientcmdapiMinifyFlatten keeps only the current context of cfg and embeds the certificate
// files it references (certificate-authority, client-certificate, client-key). Other file
// references (tokenFile, an exec command) are left as they are.
func clientcmdapiMinifyFlatten(cfg *clientcmdapi.Config) error {
	if cfg.CurrentContext == "" || cfg.Contexts[cfg.CurrentContext] == nil {
		return errors.New("it has no current-context naming one of its contexts (is this a kubeconfig? set one with `kubectl config use-context`)")
	}
	if err := clientcmdapi.MinifyConfig(cfg); err != nil {
		return err
	}
	return clientcmdapi.FlattenConfig(cfg)
}
