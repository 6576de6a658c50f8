// The TCP store: TcpStoreServer (one per job, usually on rank 0) and TcpStoreClient (every rank).
#pragma once

#include "core/store/tcp_store_client.h"
#include "core/store/tcp_store_server.h"
