import GatewayConfiguration
import PushGateway
import PushSystem

/// `push-gateway serve` (docs/protocol.md §12): validate the configuration, refuse to start on any
/// error, start the application (both listeners, the reaper, the certificate warnings),
/// and stop it, draining, on SIGTERM or SIGINT.
enum ServeCommand {
    static let usage = "usage: push-gateway serve\n"

    static func run(arguments: [String], environment: [String: String]) -> Int32 {
        guard arguments.isEmpty else {
            StandardStreams.writeError("push-gateway serve: unexpected argument '\(arguments[0])'\n" + usage)
            return CommandLineTool.usageExitCode
        }
        let configuration: GatewayConfiguration
        do {
            configuration = try GatewayConfiguration(environment: environment)
        } catch {
            StandardStreams.writeError(CheckConfigCommand.errorLines(error.problems, command: "serve"))
            return 1
        }
        let problems = StartupChecks.problems(configuration)
        guard problems.isEmpty else {
            StandardStreams.writeError(CheckConfigCommand.errorLines(problems, command: "serve"))
            return 1
        }
        let logger = Logger(level: configuration.logLevel)
        for setting in configuration.insecureSettings {
            logger.warning("insecure test/development setting in use", ["variable": .string(setting)])
        }
        for warning in StartupChecks.warnings(configuration, environment: environment) {
            logger.warning(warning)
        }
        raiseOpenFileLimit(configuration, logger)
        do {
            // Signals are blocked before any thread starts so every thread inherits the mask.
            let signals = try SignalNotifier()
            // Every profile's push provider; loads every .p8 key (StartupChecks checked them).
            let application = try GatewayApplication.configured(configuration, logger: logger)
            do throws(GatewayError) {
                try application.start()
            } catch {
                guard error.code == .listener else { throw error }
                StandardStreams.writeError("push-gateway serve: \(error.description)\n")
                return 1
            }
            let signal = try signals.waitForSignal()
            logger.info("draining", ["signal": .int(Int64(signal))])
            application.stop()
            logger.info("stopped")
            return 0
        } catch {
            logger.error("cannot start", ["error": .string("\(error)")])
            return 1
        }
    }

    /// Descriptors beyond the public connection cap: the private listener's 64 connections, the
    /// database pool, the APNs connections, listeners, epoll and event descriptors, with headroom.
    static let descriptorReserve: UInt64 = 256

    /// Every connection is a descriptor, and the common default soft limit (1024) would stop
    /// `accept` long before `PUSH_GATEWAY_MAX_CONNECTIONS`: raise the soft limit to the hard limit
    /// (docs/decisions/0150). Too low a hard limit is a warning, not a refusal to start: past it,
    /// accepting pauses briefly instead of answering 503.
    static func raiseOpenFileLimit(_ configuration: GatewayConfiguration, _ logger: Logger) {
        do {
            let before = try OpenFileLimit.current()
            let after = try OpenFileLimit.raiseSoftToHard()
            if after.soft != before.soft {
                logger.info(
                    "raised the open file limit",
                    ["previous": .int(Int64(clamping: before.soft)), "soft": .int(Int64(clamping: after.soft))])
            }
            if after.soft < UInt64(configuration.maxConnections) + descriptorReserve {
                logger.warning(
                    "the open file limit is below PUSH_GATEWAY_MAX_CONNECTIONS plus a reserve; raise the hard limit",
                    ["soft": .int(Int64(clamping: after.soft)), "hard": .int(Int64(clamping: after.hard))])
            }
        } catch {
            logger.warning("cannot raise the open file limit", ["error": .string("\(error)")])
        }
    }
}
