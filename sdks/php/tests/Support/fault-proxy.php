<?php

/**
 * The fault proxy's process: php fault-proxy.php <upstream base URL> <folder> (see FaultProxyServer).
 */

declare(strict_types=1);

require __DIR__ . '/FaultProxyServer.php';

\Pagamentos\Tests\Support\FaultProxyServer::run($argv[1], $argv[2]);
