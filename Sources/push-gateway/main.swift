import Glibc
import PushGatewayCommands

exit(CommandLineTool.run(arguments: CommandLine.arguments, environment: ProcessInfoEnvironment.current()))
