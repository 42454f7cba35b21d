import Glibc
import PushGateway

exit(CommandLineTool.run(arguments: CommandLine.arguments, environment: ProcessInfoEnvironment.current()))
