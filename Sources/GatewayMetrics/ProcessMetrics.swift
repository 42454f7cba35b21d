import PushMetrics
import PushSystem

/// The `process_*` series of Prometheus' client conventions, read from /proc at each scrape.
enum ProcessMetrics {
    static func register(in registry: MetricsRegistry) {
        func gauge(
            _ name: String, _ help: String, _ type: String = "gauge",
            _ read: @escaping @Sendable (ProcessStatistics) -> Double?
        ) {
            registry.register(
                SampledGaugeFamily(name: name, help: help, type: type) {
                    read(ProcessStatistics.current()).map { [([], $0)] } ?? []
                })
        }
        gauge("process_cpu_seconds_total", "Total user and system CPU time spent in seconds.", "counter") {
            $0.cpuSeconds
        }
        gauge("process_resident_memory_bytes", "Resident memory size in bytes.") { $0.residentMemoryBytes }
        gauge("process_open_fds", "Number of open file descriptors.") { $0.openFileDescriptors }
        gauge("process_max_fds", "Maximum number of open file descriptors.") { $0.maximumFileDescriptors }
        gauge("process_start_time_seconds", "Start time of the process since unix epoch in seconds.") {
            $0.startTimeSeconds
        }
    }
}
