"""Real runs: the testbed (network namespaces, TUN devices, the emulator) and the stacks run
through it (Linux TCP, the simulator's transport over UDP, quinn, your own programs,
libtorrent swarms), and `slowstart compare` of simulated beside real. Above running."""
