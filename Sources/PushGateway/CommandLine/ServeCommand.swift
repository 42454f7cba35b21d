import PushSystem

/// `push-gateway serve` (PROTOCOL.md §12): validate the configuration, refuse to start on any
/// error, run both listeners and the reaper, and drain on SIGTERM or SIGINT.
enum ServeCommand {
    static func run(arguments: [String], environment: [String: String]) -> Int32 {
        guard arguments.isEmpty else {
            StandardStreams.writeError("usage: push-gateway serve\n")
            return CommandLineTool.usageExitCode
        }
        let configuration: GatewayConfiguration
        do {
            configuration = try GatewayConfiguration(environment: environment)
        } catch {
            StandardStreams.writeError(error.errors.map { "configuration error: \($0)\n" }.joined())
            return 1
        }
        let problems = StartupChecks.problems(configuration)
        guard problems.isEmpty else {
            StandardStreams.writeError(problems.map { "configuration error: \($0)\n" }.joined())
            return 1
        }
        let logger = Logger(level: configuration.logLevel)
        for setting in configuration.insecureSettings {
            logger.warning("insecure test/development setting in use", ["variable": .string(setting)])
        }
        do {
            // Signals are blocked before any thread starts so every thread inherits the mask.
            let signals = try SignalNotifier()
            let application = GatewayApplication(configuration: configuration, logger: logger)
            let server = try GatewayServer(application: application)
            let reaper = Reaper(
                pool: application.pool, settings: ReaperSettings(configuration: configuration),
                metrics: application.metrics, logger: logger)
            try server.start()
            try reaper.start()
            logger.info(
                "listening",
                [
                    "public_port": .int(Int64(server.publicPort)), "private_port": .int(Int64(server.privatePort)),
                ])
            let signal = try signals.waitForSignal()
            logger.info("draining", ["signal": .int(Int64(signal))])
            reaper.beginStop()
            server.drain()
            reaper.waitUntilStopped()
            logger.info("stopped")
            return 0
        } catch {
            logger.error("cannot start", ["error": .string("\(error)")])
            return 1
        }
    }
}
