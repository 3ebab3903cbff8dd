<?php

declare(strict_types=1);

namespace Pagamentos\Tests\Support;

/**
 * PHP's built-in web server (`php -S`) on a free port, running a router script: how a merchant
 * on plain PHP receives webhooks.
 */
final class PhpServer
{
    private function __construct(public readonly string $baseUrl, public readonly Process $process)
    {
    }

    /** @param array<string, string> $env */
    public static function start(string $router, array $env = []): self
    {
        $env = array_merge(Process::environment(), $env);
        // A port free when picked may be taken before php binds it: then try another.
        for ($try = 1;; $try++) {
            $dir = Process::tempDir('pagamentos-php-s-');
            $port = Process::freePort();
            $process = new Process([PHP_BINARY, '-S', '127.0.0.1:' . $port, $router], $dir, dirname($router), $env);
            try {
                $process->waitFor(static fn (): ?bool => Process::accepts($port) ? true : null, 'php -S listening', 30);
                return new self('http://127.0.0.1:' . $port, $process);
            } catch (\RuntimeException $e) {
                $process->stop();
                if ($try >= 5) {
                    throw $e;
                }
            }
        }
    }
}
