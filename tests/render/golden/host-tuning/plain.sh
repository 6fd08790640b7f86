#!/bin/sh
# nfvplace host tuning for compute-07 (VMs: web-vm-1)
#
# 1. Kernel command line: append to GRUB_CMDLINE_LINUX in /etc/default/grub,
#    run update-grub (or grub2-mkconfig) and reboot.
NFVPLACE_KERNEL_CMDLINE="isolcpus=1-19,21-35,41-59,61-79 nohz_full=1-19,21-35,41-59,61-79 rcu_nocbs=1-19,21-35,41-59,61-79 irqaffinity=0,20,40,60 kthread_cpus=0,20,40,60 default_hugepagesz=1G hugepagesz=1G hugepages=48 hugepagesz=2M hugepages=4096 intel_iommu=on iommu=pt"

# 2. Hugepages per NUMA node (the same reservation, at run time; 1G pages may
#    fail to allocate once memory is fragmented, the command line is reliable)
echo 24 > /sys/devices/system/node/node0/hugepages/hugepages-1048576kB/nr_hugepages
echo 24 > /sys/devices/system/node/node1/hugepages/hugepages-1048576kB/nr_hugepages
echo 2048 > /sys/devices/system/node/node0/hugepages/hugepages-2048kB/nr_hugepages
echo 2048 > /sys/devices/system/node/node1/hugepages/hugepages-2048kB/nr_hugepages

# 3. IRQ affinity: NIC and VF interrupts on housekeeping PUs of their own node
systemctl disable --now irqbalance 2>/dev/null || true
# 0000:18:00.0: Ethernet Controller XL710 port ens1f0 (vswitch), node 0 -> PUs 0,40
for irq in $(ls /sys/bus/pci/devices/0000:18:00.0/msi_irqs 2>/dev/null); do echo 0,40 > /proc/irq/$irq/smp_affinity_list; done
# 0000:18:00.1: Ethernet Controller XL710 port ens1f1 (sriov), node 0 -> PUs 0,40
for irq in $(ls /sys/bus/pci/devices/0000:18:00.1/msi_irqs 2>/dev/null); do echo 0,40 > /proc/irq/$irq/smp_affinity_list; done
# 0000:af:00.0: Ethernet Controller XL710 port ens7f0 (free), node 1 -> PUs 20,60
for irq in $(ls /sys/bus/pci/devices/0000:af:00.0/msi_irqs 2>/dev/null); do echo 20,60 > /proc/irq/$irq/smp_affinity_list; done
# 0000:af:00.1: Ethernet Controller XL710 port ens7f1 (sriov), node 1 -> PUs 20,60
for irq in $(ls /sys/bus/pci/devices/0000:af:00.1/msi_irqs 2>/dev/null); do echo 20,60 > /proc/irq/$irq/smp_affinity_list; done
