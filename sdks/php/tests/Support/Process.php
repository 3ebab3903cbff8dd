<?php

declare(strict_types=1);

namespace Pagamentos\Tests\Support;

/**
 * A child process the tests start (the API server, `php -S`, the fault proxy), its output in
 * files of its own folder, stopped and cleaned up when the test run ends.
 */
final class Process
{
    /** @var resource */
    private $handle;
    private bool $stopped = false;

    /**
     * @param list<string> $command run without a shell
     * @param array<string, string> $env the whole environment of the child
     */
    public function __construct(array $command, public readonly string $dir, ?string $cwd = null, array $env = [])
    {
        $handle = proc_open(
            $command,
            [
                0 => ['file', '/dev/null', 'r'],
                1 => ['file', $dir . '/stdout', 'w'],
                2 => ['file', $dir . '/stderr', 'w'],
            ],
            $pipes,
            $cwd,
            $env === [] ? null : $env,
        );
        if ($handle === false) {
            throw new \RuntimeException('Could not start ' . implode(' ', $command));
        }
        $this->handle = $handle;
        register_shutdown_function(function (): void {
            $this->stop();
        });
    }

    public static function tempDir(string $prefix): string
    {
        $dir = sys_get_temp_dir() . '/' . $prefix . bin2hex(random_bytes(6));
        mkdir($dir, 0700);
        // Removed after every process is stopped: registered during shutdown, it runs last.
        register_shutdown_function(static function () use ($dir): void {
            register_shutdown_function(static function () use ($dir): void {
                self::removeTree($dir);
            });
        });
        return $dir;
    }

    public function running(): bool
    {
        return !$this->stopped && proc_get_status($this->handle)['running'];
    }

    public function output(): string
    {
        return (string) @file_get_contents($this->dir . '/stdout')
            . (string) @file_get_contents($this->dir . '/stderr');
    }

    /**
     * Waits until `$ready()` returns a value other than null, or fails when the process exits
     * first or the deadline passes (a ceiling for a slow, shared machine; not a timing).
     *
     * @template T
     * @param \Closure(): (T|null) $ready
     * @return T
     */
    public function waitFor(\Closure $ready, string $what, float $deadlineSeconds = 120.0): mixed
    {
        $until = microtime(true) + $deadlineSeconds;
        while (true) {
            $value = $ready();
            if ($value !== null) {
                return $value;
            }
            if (!$this->running()) {
                throw new \RuntimeException(sprintf("The process exited before %s:\n%s", $what, $this->output()));
            }
            if (microtime(true) > $until) {
                throw new \RuntimeException(sprintf("No %s after %d s:\n%s", $what, $deadlineSeconds, $this->output()));
            }
            usleep(20_000);
        }
    }

    public function stop(): void
    {
        if ($this->stopped) {
            return;
        }
        $this->stopped = true;
        $status = proc_get_status($this->handle);
        if ($status['running']) {
            proc_terminate($this->handle, 15);
            $until = microtime(true) + 20;
            while (proc_get_status($this->handle)['running'] && microtime(true) < $until) {
                usleep(20_000);
            }
            if (proc_get_status($this->handle)['running']) {
                proc_terminate($this->handle, 9);
            }
        }
        proc_close($this->handle);
    }

    /** A TCP port free at this moment on 127.0.0.1. */
    public static function freePort(): int
    {
        $socket = stream_socket_server('tcp://127.0.0.1:0', $errno, $error);
        if ($socket === false) {
            throw new \RuntimeException('No free port: ' . $error);
        }
        $name = (string) stream_socket_get_name($socket, false);
        fclose($socket);
        return (int) substr($name, strrpos($name, ':') + 1);
    }

    public static function accepts(int $port): bool
    {
        $socket = @stream_socket_client('tcp://127.0.0.1:' . $port, $errno, $error, 1);
        if ($socket === false) {
            return false;
        }
        fclose($socket);
        return true;
    }

    /** @return array<string, string> this process's environment, to pass on with changes */
    public static function environment(): array
    {
        return getenv();
    }

    private static function removeTree(string $dir): void
    {
        if (!is_dir($dir)) {
            return;
        }
        $items = new \RecursiveIteratorIterator(
            new \RecursiveDirectoryIterator($dir, \FilesystemIterator::SKIP_DOTS),
            \RecursiveIteratorIterator::CHILD_FIRST,
        );
        foreach ($items as $item) {
            $item->isDir() ? rmdir($item->getPathname()) : unlink($item->getPathname());
        }
        rmdir($dir);
    }
}
