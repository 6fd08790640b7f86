"""`nfvplace agent`, the host-agent role: discovery reported to a service every interval, the
service's claims kept, drift against libvirt's running domains reported (`run`, `drift`,
`domains`)."""
