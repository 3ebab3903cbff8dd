<?php

declare(strict_types=1);

namespace Pagamentos\Tests\Support;

/**
 * Starts fault-proxy.php in front of a server and drives it: what to do with the next
 * requests, and what it received.
 */
final class FaultProxy
{
    private function __construct(public readonly string $baseUrl, private readonly Process $process)
    {
    }

    public static function start(string $upstream): self
    {
        $dir = Process::tempDir('pagamentos-php-proxy-');
        $process = new Process([PHP_BINARY, __DIR__ . '/fault-proxy.php', $upstream, $dir], $dir);
        $port = $process->waitFor(
            static fn (): ?string => is_file($dir . '/port') ? (string) file_get_contents($dir . '/port') : null,
            'proxy port',
        );
        return new self('http://127.0.0.1:' . $port, $process);
    }

    /**
     * What to do with the next requests, one action each (see fault-proxy.php); forward after.
     *
     * @param list<array<string, mixed>> $actions
     */
    public function script(array $actions): void
    {
        file_put_contents($this->process->dir . '/requests.log', '');
        file_put_contents($this->process->dir . '/script.json.tmp', json_encode($actions));
        rename($this->process->dir . '/script.json.tmp', $this->process->dir . '/script.json');
    }

    /**
     * The requests received since the last script(), oldest first.
     *
     * @return list<array{method: string, path: string, headers: array<string, string>, body: string, action: string}>
     */
    public function requests(): array
    {
        $lines = file($this->process->dir . '/requests.log', FILE_IGNORE_NEW_LINES | FILE_SKIP_EMPTY_LINES) ?: [];
        return array_map(static fn (string $line): array => json_decode($line, true), $lines);
    }

    /** An answer in the API's error envelope, as a gateway in front of it would not send, but the API would. */
    public static function apiError(int $status, string $code, array $headers = []): array
    {
        return [
            'do' => 'respond',
            'status' => $status,
            'headers' => ['Content-Type' => 'application/json', 'X-Correlation-Id' => 'req_proxy'] + $headers,
            'body' => json_encode(['error' => [
                'code' => $code,
                'message' => 'scripted by the test proxy',
                'correlationId' => 'req_proxy',
            ]]),
        ];
    }
}
